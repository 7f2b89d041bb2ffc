package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/specedit"
)

func newResolveCmd() *cobra.Command {
	var (
		rf    registryFlags
		write bool
	)
	cmd := &cobra.Command{
		Use:   "resolve [DIR | DIR/olm-cmp.yaml]",
		Short: "Print the exact image@sha256 DIR/olm-cmp.yaml renders today; --write pins it in the file",
		Long: `Resolve pins the bundle of DIR/olm-cmp.yaml as a render would (a tag asked of the
registry, a catalog read and its choice made) and prints it:
  an image bundle    the bundle image by digest;
  a catalog          the catalog image by digest, the chosen version and its bundle image;
  a directory        nothing moves: it is pinned by its content digest, printed.
With --write, the file is changed in place so the next render takes the same
bundle: spec.bundle becomes repo[:tag]@sha256:… (spec.version, then in the tag,
is removed); for a catalog, spec.catalog becomes the catalog image by digest and
spec.version the exact version chosen. Comments, blank lines and key order stay
as they are. Running it again changes nothing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The same argument rule as render (sourceDir): --write edits
			// exactly the file that was resolved.
			req, err := loadRequest(cmd, firstArg(args), nil)
			if err != nil {
				return err
			}
			file := filepath.Join(req.SourceDir, spec.FileName)
			loader, err := rf.loader()
			if err != nil {
				return err
			}
			rv, err := (&render.Renderer{Loader: loader}).Resolve(cmd.Context(), req)
			if err != nil {
				return err
			}
			p := pinOf(req.Spec, rv)
			p.print(cmd.OutOrStdout())
			if !write {
				return nil
			}
			return p.write(cmd.OutOrStdout(), file)
		},
	}
	rf.register(cmd.Flags())
	cmd.Flags().BoolVar(&write, "write", false, "pin the result in olm-cmp.yaml in place")
	return cmd
}

// pin is what a spec resolves to, and the edits that pin it.
type pin struct {
	lines [][2]string // label, value: what resolve prints
	edits []specedit.Edit
	// want is the spec the edits must produce, checked before writing.
	want func(spec.Spec) bool
	// note explains why there is nothing to write.
	note string
}

func pinOf(s spec.Spec, rv render.Resolved) pin {
	switch {
	case rv.Catalog != nil:
		c := rv.Catalog
		p := pin{lines: [][2]string{{"catalog", c.Ref}}}
		catalogRef := s.Catalog
		if c.Image != "" {
			p.lines[0][1] = c.Image
			catalogRef = withDigest(s.Catalog, "", c.Image)
			p.edits = append(p.edits, specedit.Edit{Key: "catalog", Value: catalogRef})
		}
		p.lines = append(p.lines, [2]string{"version", c.Version}, [2]string{"bundle", rv.Origin.Image})
		p.edits = append(p.edits, specedit.Edit{Key: "version", Value: c.Version, After: "package"})
		p.want = func(got spec.Spec) bool { return got.Catalog == catalogRef && got.Version == c.Version }
		return p
	case rv.Origin.Image == "":
		return pin{
			lines: [][2]string{{"bundle", s.Bundle}, {"digest", rv.Origin.Digest}},
			note:  fmt.Sprintf("spec.bundle %q is a directory: it is already pinned by its content (the digest above), and by Git", s.Bundle),
		}
	default:
		ref := withDigest(s.Bundle, s.Version, rv.Origin.Image)
		return pin{
			lines: [][2]string{{"bundle", rv.Origin.Image}},
			edits: []specedit.Edit{{Key: "bundle", Value: ref}, {Key: "version", Delete: true}},
			want:  func(got spec.Spec) bool { return got.Bundle == ref && got.Version == "" },
		}
	}
}

// withDigest writes ref (tag optional, version the tag when it has none)
// pinned by the digest of pinned (repo@sha256:…), keeping the user's
// repository spelling and the tag, which says to a reader what the digest
// is: quay.io/org/bundle:1.2@sha256:… (the digest wins when both are given).
func withDigest(ref, version, pinned string) string {
	_, digest, ok := strings.Cut(pinned, "@")
	if !ok {
		return pinned
	}
	r, err := name.ParseReference(ref, name.WithDefaultTag(""))
	if err != nil {
		return pinned
	}
	repo, tag := ref, version
	switch r := r.(type) {
	case name.Digest:
		repo, _, _ = strings.Cut(ref, "@")
		if t, err := name.NewTag(repo, name.WithDefaultTag("")); err == nil && t.TagStr() != "" {
			repo, tag = strings.TrimSuffix(repo, ":"+t.TagStr()), t.TagStr()
		}
	case name.Tag:
		if t := r.TagStr(); t != "" {
			repo, tag = strings.TrimSuffix(ref, ":"+t), t
		}
	}
	if tag != "" {
		repo += ":" + tag
	}
	return repo + "@" + digest
}

func (p pin) print(w io.Writer) {
	for _, l := range p.lines {
		fmt.Fprintf(w, "%-8s %s\n", l[0]+":", l[1])
	}
}

// write makes the edits in file, atomically, unless they change nothing.
func (p pin) write(w io.Writer, file string) error {
	if len(p.edits) == 0 {
		fmt.Fprintln(w, p.note+": nothing to write")
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("resolve --write: %w", err)
	}
	out, err := specedit.Apply(data, p.edits)
	if err != nil {
		return fmt.Errorf("resolve --write %s: %w", file, err)
	}
	if bytes.Equal(out, data) {
		fmt.Fprintf(w, "%s is already pinned\n", file)
		return nil
	}
	// Read back before writing: a file olm-cmp cannot parse, or that does not
	// say what was meant, is never written.
	f, err := spec.Parse(file, out)
	if err == nil && !p.want(f.Spec) {
		err = fmt.Errorf("the edited file does not say what was meant")
	}
	if err != nil {
		return fmt.Errorf("resolve --write %s: could not edit the file safely (%w): pin the values above by hand", file, err)
	}
	if err := writeAtomic(file, out); err != nil {
		return fmt.Errorf("resolve --write: %w", err)
	}
	fmt.Fprintf(w, "pinned %s\n", file)
	return nil
}

// writeAtomic replaces file with data through a temporary file in the same
// directory and a rename, keeping its permissions: a reader (Argo CD, an
// editor) sees the old file or the new one, never half of one.
func writeAtomic(file string, data []byte) error {
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
