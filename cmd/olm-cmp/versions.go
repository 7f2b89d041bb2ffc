package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/versions"
)

func newVersionsCmd() *cobra.Command {
	var (
		rf                        registryFlags
		output                    string
		catalogRef, pkg, channels string
	)
	cmd := &cobra.Command{
		Use:   "versions REF | --catalog C --package P",
		Short: "List a bundle repository's versions (its tags by semver), or a catalog package's channels, heads, upgrade edges and deprecations",
		Long: `Versions answers which versions of an operator exist.

For REF, a bundle image repository (a tag or digest in REF is ignored), it lists
every tag, all pages of the registry's list: the tags that are semantic versions
(v1.2.3 or 1.2.3, pre-releases too; build metadata after "_", as a tag cannot
hold "+"), lowest first, then the others (latest, 1.2, signatures) apart.

With --catalog (a catalog image or ./directory) and --package instead, it shows
the package's channels (--channel: only those, comma-separated), each with its
head (the entry no other entry replaces or skips, as OLM computes it) and every
version in it, lowest first, with the upgrade edges its channel entry declares
(replaces, skips, skipRange) and whether it, its channel or the package is
deprecated. A channel opm validate would refuse (no head, or several) says so.

Exit status: 0 listed, 1 failure (the repository or package is not there, the
registry or catalog could not be read).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if catalogRef != "" {
				if len(args) > 0 {
					return fmt.Errorf("versions takes REF (a bundle repository) or --catalog with --package, not both")
				}
				return nil
			}
			if pkg != "" || channels != "" {
				return fmt.Errorf("--package and --channel need --catalog")
			}
			if len(args) != 1 {
				return fmt.Errorf("versions takes one bundle repository (quay.io/org/operator-bundle), or --catalog C --package P")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %q: use text or json", output)
			}
			loader, err := rf.loader()
			if err != nil {
				return err
			}
			var report interface{ writeText(io.Writer) error }
			if catalogRef != "" {
				if pkg == "" {
					return fmt.Errorf("--catalog needs --package: the package whose versions to list")
				}
				report, err = catalogVersions(cmd.Context(), loader, catalogRef, pkg, channels)
			} else {
				report, err = tagVersions(cmd.Context(), loader, args[0])
			}
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			}
			return report.writeText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().StringVar(&catalogRef, "catalog", "", "file-based catalog image or ./directory whose package to show")
	cmd.Flags().StringVar(&pkg, "package", "", "package of --catalog")
	cmd.Flags().StringVar(&channels, "channel", "", "only these channels of --package, comma-separated; default every channel")
	rf.register(cmd.Flags())
	return cmd
}

// The registry and catalog access of versions, in one place: a tag list
// through the loader's registry access, a catalog image through its pull
// and index (a directory is read through an os.Root, as render reads one).

func listRepositoryTags(ctx context.Context, loader *bundle.ImageLoader, ref string) ([]versions.Tag, []string, error) {
	return versions.ListTagsWith(ctx, loader, ref)
}

// openCatalog opens --catalog: an image (pulled, cached by digest, with
// its per-package index beside it) or a directory. image is the catalog
// image pinned by digest ("" for a directory).
func openCatalog(ctx context.Context, loader *bundle.ImageLoader, ref string) (fsys fs.FS, image string, done func(), err error) {
	ref, err = catalogArg(ref)
	if err != nil {
		return nil, "", nil, err
	}
	if render.IsLocalDir(ref) {
		root, err := os.OpenRoot(ref)
		if err != nil {
			return nil, "", nil, fmt.Errorf("--catalog %s: %w", echo.Quote(ref), err)
		}
		return catalog.Open(root.FS(), ""), "", func() { root.Close() }, nil
	}
	fsys, o, err := loader.LoadCatalog(ctx, ref)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--catalog %s: %w", echo.Quote(ref), err)
	}
	return catalog.Open(fsys, bundle.CatalogIndexFile(o.Dir)), o.Image, func() {}, nil
}

// tagsReport is `versions REF`; JSON field names are its -o json form.
type tagsReport struct {
	Repository string    `json:"repository"`
	Tags       []tagJSON `json:"tags"`
	// Other are the tags that are not semantic versions, sorted.
	Other []string `json:"other"`
}

type tagJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func tagVersions(ctx context.Context, loader *bundle.ImageLoader, ref string) (*tagsReport, error) {
	if render.IsLocalDir(ref) {
		return nil, fmt.Errorf("%s is a directory: versions REF lists the tags of a bundle image repository (quay.io/org/operator-bundle); for a catalog directory give --catalog %s --package P", echo.Short(ref), echo.Short(ref))
	}
	if !render.HasRegistry(ref) {
		last := ref[strings.LastIndexByte(ref, '/')+1:]
		return nil, fmt.Errorf("%s: not an image repository with its registry: give it as quay.io/org/%s (docker.io/org/%s for Docker Hub)", echo.Short(ref), echo.Short(last), echo.Short(last))
	}
	semver, other, err := listRepositoryTags(ctx, loader, ref)
	if err != nil {
		return nil, err
	}
	r := &tagsReport{Repository: ref, Tags: []tagJSON{}, Other: other}
	if name, err := versions.RepositoryName(ref); err == nil {
		r.Repository = name
	}
	for _, t := range semver {
		r.Tags = append(r.Tags, tagJSON{Name: t.Name, Version: t.Version.String()})
	}
	if r.Other == nil {
		r.Other = []string{}
	}
	return r, nil
}

func (r *tagsReport) writeText(out io.Writer) error {
	w := &errWriter{w: out}
	w.printf("%s: %d semantic version tags, %d other tags\n", echo.Text(r.Repository), len(r.Tags), len(r.Other))
	for _, t := range r.Tags {
		w.printf("%s\n", t.Name) // checked against the tag grammar: nothing to escape
	}
	if len(r.Other) > 0 {
		w.printf("other tags (not semantic versions):\n")
		for _, t := range r.Other {
			w.printf("%s\n", t)
		}
	}
	return w.err
}

// packageReport is `versions --catalog C --package P`.
type packageReport struct {
	Catalog        string        `json:"catalog"`
	Image          string        `json:"image,omitempty"`
	Package        string        `json:"package"`
	DefaultChannel string        `json:"defaultChannel,omitempty"`
	Deprecated     bool          `json:"deprecated"`
	Channels       []channelJSON `json:"channels"`
}

type channelJSON struct {
	Name       string      `json:"name"`
	Head       string      `json:"head"`
	Deprecated bool        `json:"deprecated"`
	Problem    string      `json:"problem,omitempty"`
	Entries    []entryJSON `json:"entries"`
}

type entryJSON struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Release    string   `json:"release,omitempty"`
	Image      string   `json:"image"`
	Replaces   string   `json:"replaces,omitempty"`
	Skips      []string `json:"skips,omitempty"`
	SkipRange  string   `json:"skipRange,omitempty"`
	Deprecated bool     `json:"deprecated"`
	Channels   []string `json:"channels"`
}

func catalogVersions(ctx context.Context, loader *bundle.ImageLoader, ref, pkg, channels string) (*packageReport, error) {
	fsys, image, done, err := openCatalog(ctx, loader, ref)
	if err != nil {
		return nil, err
	}
	defer done()
	p, err := versions.ReadPackage(ctx, fsys, pkg)
	if err != nil {
		return nil, err
	}
	r := &packageReport{Catalog: ref, Image: image, Package: p.Name, DefaultChannel: p.DefaultChannel, Deprecated: p.Deprecated, Channels: []channelJSON{}}
	want := map[string]bool{}
	for _, n := range strings.Split(channels, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if p.Channel(n) == nil {
			var all []string
			for _, c := range p.Channels {
				all = append(all, c.Name)
			}
			return nil, fmt.Errorf("--channel %s: package %s has no such channel (channels: %s)", echo.Quote(n), echo.Quote(pkg), echo.Short(strings.Join(all, ", ")))
		}
		want[n] = true
	}
	for _, c := range p.Channels {
		if len(want) > 0 && !want[c.Name] {
			continue
		}
		cj := channelJSON{Name: c.Name, Head: c.Head, Deprecated: c.Deprecated, Problem: c.Problem, Entries: []entryJSON{}}
		for _, e := range c.Entries {
			cj.Entries = append(cj.Entries, entryJSON{Name: e.Name, Version: e.Version, Release: e.Release, Image: e.Image, Replaces: e.Replaces,
				Skips: e.Skips, SkipRange: e.SkipRange, Deprecated: e.Deprecated, Channels: e.Channels})
		}
		r.Channels = append(r.Channels, cj)
	}
	return r, nil
}

// writeText prints a channel at a time: its head, then a table of its
// versions, lowest first. Catalog values are escaped (echo.Text) and long
// ones cut (echo.Short): a catalog is untrusted.
func (r *packageReport) writeText(out io.Writer) error {
	w := &errWriter{w: out}
	from := echo.Text(r.Catalog)
	if r.Image != "" {
		from = echo.Text(r.Image)
	}
	head := fmt.Sprintf("package %s from catalog %s", echo.Short(r.Package), from)
	if r.DefaultChannel != "" {
		head += ", default channel " + echo.Short(r.DefaultChannel)
	}
	if r.Deprecated {
		head += " (deprecated)"
	}
	w.printf("%s\n", head)
	for _, c := range r.Channels {
		line := fmt.Sprintf("\nchannel %s", echo.Short(c.Name))
		if c.Deprecated {
			line += " (deprecated)"
		}
		if c.Head != "" {
			line += ": head " + echo.Short(c.Head)
		} else {
			line += ": " + c.Problem
		}
		w.printf("%s\n", line)
		var table bytes.Buffer
		tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  VERSION\tBUNDLE\tREPLACES\tSKIPS\tSKIP RANGE\t")
		for _, e := range c.Entries {
			note := ""
			if e.Deprecated {
				note = "deprecated"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", cell(e.Version), cell(e.Name), cell(e.Replaces), cell(strings.Join(e.Skips, ",")), cell(e.SkipRange), note)
		}
		tw.Flush()
		for _, l := range strings.SplitAfter(table.String(), "\n") {
			w.printf("%s", strings.TrimRight(l, " \n")+strings.Repeat("\n", strings.Count(l, "\n")))
		}
	}
	return w.err
}

// cell is a table cell: escaped, cut, "-" when empty; tabs cannot reach
// the table (echo.Text escapes them).
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return echo.Short(s)
}

// errWriter keeps the first write error, so a report's many lines need
// one check.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}
