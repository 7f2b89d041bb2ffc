package versions

// The reports of `olm-cmp versions`: what it prints as text and as JSON.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// TagsReport is `versions REF`; JSON field names are its -o json form.
type TagsReport struct {
	Repository string      `json:"repository"`
	Tags       []ReportTag `json:"tags"`
	// Other are the tags that are not semantic versions, sorted.
	Other []string `json:"other"`
	// Invalid counts the names the registry listed that are not tags (the
	// distribution API's grammar), left out; absent when none.
	Invalid int `json:"invalid,omitempty"`
}

// ReportTag is a semantic version tag of a TagsReport.
type ReportTag struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Tags is `versions REF`'s report: the tags of the repository ref names,
// through the loader's registry access (ListTagsWith).
func Tags(ctx context.Context, loader *bundle.ImageLoader, ref string) (*TagsReport, error) {
	semver, other, invalid, err := ListTagsWith(ctx, loader, ref)
	if err != nil {
		return nil, err
	}
	r := &TagsReport{Repository: ref, Tags: []ReportTag{}, Other: other, Invalid: invalid}
	if name, err := RepositoryName(ref); err == nil {
		r.Repository = name
	}
	for _, t := range semver {
		r.Tags = append(r.Tags, ReportTag{Name: t.Name, Version: t.Version.String()})
	}
	if r.Other == nil {
		r.Other = []string{}
	}
	return r, nil
}

// WriteText prints the semantic version tags, lowest first, then the others.
func (r *TagsReport) WriteText(out io.Writer) error {
	w := &errWriter{w: out}
	w.printf("%s: %d semantic version tags, %d other tags\n", echo.Text(r.Repository), len(r.Tags), len(r.Other))
	if r.Invalid > 0 {
		w.printf("left out: %d names the registry listed that are not valid tags ([A-Za-z0-9_][A-Za-z0-9._-]{0,127})\n", r.Invalid)
	}
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

// PackageReport is `versions --catalog C --package P`; JSON field names
// are its -o json form.
type PackageReport struct {
	Catalog        string `json:"catalog"`
	Image          string `json:"image,omitempty"`
	Package        string `json:"package"`
	DefaultChannel string `json:"defaultChannel,omitempty"`
	Deprecated     bool   `json:"deprecated"`
	// Problems are what opm validate refuses outside the channels' graphs
	// (a bundle in no channel, a default channel that is not one, a
	// deprecation naming nothing); absent when there are none.
	Problems []string        `json:"problems,omitempty"`
	Channels []ReportChannel `json:"channels"`
}

// ReportChannel is a channel of a PackageReport.
type ReportChannel struct {
	Name       string        `json:"name"`
	Head       string        `json:"head"`
	Deprecated bool          `json:"deprecated"`
	Problem    string        `json:"problem,omitempty"`
	Entries    []ReportEntry `json:"entries"`
}

// ReportEntry is a channel entry of a PackageReport; Channels are all the
// channels listing its bundle.
type ReportEntry struct {
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

// Report is `versions --catalog C --package P`'s report: package pkg of
// the catalog fsys (ref as the user named it, image the catalog image
// pinned by digest or ""), only the channels named in channels
// (comma-separated; "" for every channel). A channel named that is not the
// package's is an error naming the package's channels.
func Report(ctx context.Context, fsys fs.FS, ref, image, pkg, channels string) (*PackageReport, error) {
	p, err := ReadPackage(ctx, fsys, pkg)
	if err != nil {
		return nil, err
	}
	r := &PackageReport{Catalog: ref, Image: image, Package: p.Name, DefaultChannel: p.DefaultChannel, Deprecated: p.Deprecated, Problems: p.Problems, Channels: []ReportChannel{}}
	want, have := map[string]bool{}, make(map[string]bool, len(p.Channels))
	for _, c := range p.Channels {
		have[c.Name] = true // a set: --channel can name thousands
	}
	for _, n := range strings.Split(channels, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !have[n] {
			var all []string
			for _, c := range p.Channels {
				if strings.EqualFold(c.Name, n) {
					return nil, fmt.Errorf("--channel %s: package %s has no such channel (channel names are case-sensitive: did you mean %s?)", echo.Quote(n), echo.Quote(pkg), echo.Quote(c.Name))
				}
				all = append(all, c.Name)
			}
			if len(all) == 0 {
				return nil, fmt.Errorf("--channel %s: package %s has no channels at all; opm validate refuses this catalog", echo.Quote(n), echo.Quote(pkg))
			}
			return nil, fmt.Errorf("--channel %s: package %s has no such channel (channels: %s)", echo.Quote(n), echo.Quote(pkg), echo.Short(strings.Join(all, ", ")))
		}
		want[n] = true
	}
	if channels != "" && len(want) == 0 {
		return nil, fmt.Errorf("--channel %s names no channel: give channel names, comma-separated, or leave --channel out for every channel", echo.Quote(channels))
	}
	for _, c := range p.Channels {
		if len(want) > 0 && !want[c.Name] {
			continue
		}
		cj := ReportChannel{Name: c.Name, Head: c.Head, Deprecated: c.Deprecated, Problem: c.Problem, Entries: []ReportEntry{}}
		for _, e := range c.Entries {
			cj.Entries = append(cj.Entries, ReportEntry{Name: e.Name, Version: e.Version, Release: e.Release, Image: e.Image, Replaces: e.Replaces,
				Skips: e.Skips, SkipRange: e.SkipRange, Deprecated: e.Deprecated, Channels: e.Channels})
		}
		r.Channels = append(r.Channels, cj)
	}
	return r, nil
}

// MaxJSONReport bounds a package's -o json report, before it is built. An
// entry's channels repeat in every channel listing its bundle, so a
// catalog can make the report grow as the square of its size (a bundle in
// 60,000 one-entry channels: 60,000² names from a 5 MB catalog). The
// largest package the catalog reader keeps (catalog.maxPackageBytes of
// names, 131072 items) reports in well under this when each bundle is in
// a few channels; real packages report in a few MB.
const MaxJSONReport = 128 << 20

// JSONSize is an upper bound of the bytes of r's JSON form, computed in
// time linear in the package (each bundle's channel list is measured
// once) and given up as soon as it passes MaxJSONReport.
func (r *PackageReport) JSONSize() int {
	n := 512 + jsonLen(r.Catalog) + jsonLen(r.Image) + jsonLen(r.Package) + jsonLen(r.DefaultChannel)
	for _, p := range r.Problems {
		n += 16 + jsonLen(p)
	}
	listed := map[string]int{} // bundle → bytes of its channels list
	for _, c := range r.Channels {
		n += 128 + jsonLen(c.Name) + jsonLen(c.Head) + jsonLen(c.Problem)
		for _, e := range c.Entries {
			l, ok := listed[e.Name]
			if !ok {
				for _, ch := range e.Channels {
					l += 16 + jsonLen(ch)
				}
				listed[e.Name] = l
			}
			n += 384 + l + jsonLen(e.Name) + jsonLen(e.Version) + jsonLen(e.Release) + jsonLen(e.Image) + jsonLen(e.Replaces) + jsonLen(e.SkipRange)
			for _, s := range e.Skips {
				n += 16 + jsonLen(s)
			}
			if n > MaxJSONReport {
				return n
			}
		}
	}
	return n
}

// jsonLen bounds the bytes of s as a JSON string: a byte encoding/json
// escapes takes six (\u001b).
func jsonLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == '<' || b == '>' || b == '&' || b == '"' || b == '\\' || b >= 0x80 {
			n += 5
		}
	}
	return n
}

// WriteText prints a channel at a time: its head, then a table of its
// versions, lowest first. Catalog values are escaped (echo.Text) and long
// ones cut (echo.Short): a catalog is untrusted.
func (r *PackageReport) WriteText(out io.Writer) error {
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
	for _, p := range r.Problems {
		w.printf("problem: %s\n", p) // escaped where it was worded
	}
	for _, c := range r.Channels {
		line := fmt.Sprintf("\nchannel %s", echo.Short(c.Name))
		if c.Deprecated {
			line += " (deprecated)"
		}
		switch {
		case c.Head != "" && c.Problem != "":
			line += ": head " + echo.Short(c.Head) + ", but " + c.Problem
		case c.Head != "":
			line += ": head " + echo.Short(c.Head)
		default:
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
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", cell(versionCell(e)), cell(e.Name), cell(e.Replaces), cell(strings.Join(e.Skips, ",")), cell(e.SkipRange), note)
		}
		tw.Flush()
		for _, l := range strings.SplitAfter(table.String(), "\n") {
			w.printf("%s", strings.TrimRight(l, " \n")+strings.Repeat("\n", strings.Count(l, "\n")))
		}
	}
	return w.err
}

// versionCell is an entry's version with its release when the version
// does not already show it (a legacy bundle's build metadata): bundles of
// one version told apart as -o json tells them.
func versionCell(e ReportEntry) string {
	if e.Release == "" || strings.HasSuffix(e.Version, "+"+e.Release) {
		return e.Version
	}
	return e.Version + " (release " + e.Release + ")"
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
