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
registry, a catalog read and its choice made), ignoring the pins the file already
has (they may be stale: that is what it is for), and prints it:
  an image bundle    the bundle image by digest;
  a catalog          the catalog, the chosen version and its bundle image by digest;
  a directory        nothing moves: it is pinned by its content digest, printed.
With --write, the file is changed in place so the next render takes the same
bundle: spec.version holds the tag (moved there from spec.bundle, which keeps the
repository) and spec.digest the bundle image's digest, beside it; for a catalog,
spec.version becomes the exact version chosen and spec.digest its bundle image's
digest (the catalog's tag may move: the render checks the bundle it chooses against
the pin). A later bump is a change of spec.version: the render then refuses the old
digest, naming both, until resolve --write pins the new one. Comments, blank
lines, line endings and key order stay as they are; a symbolic link is written
through to its target. Running it again changes nothing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The same argument rule as render (sourceDir): --write edits
			// exactly the file that was resolved.
			req, err := loadRequest(cmd, firstArg(args), nil)
			if err != nil {
				return err
			}
			pinned := req.Spec
			req.Spec = render.Unpinned(req.Spec)
			file := filepath.Join(req.SourceDir, spec.FileName)
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			rv, err := r.Resolve(cmd.Context(), req)
			if err != nil {
				return err
			}
			p := pinOf(pinned, req.Spec, rv)
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

// pinOf is the pin of rv, resolved from unpinned (the spec without its
// pins: render.Unpinned); file is the spec as the file has it.
func pinOf(file, unpinned spec.Spec, rv render.Resolved) pin {
	digest := rv.Origin.Digest
	switch {
	case rv.Catalog != nil:
		c := rv.Catalog
		p := pin{lines: [][2]string{{"catalog", c.Ref}}}
		if c.Image != "" {
			p.lines[0][1] = c.Image
		}
		if unpinned.Catalog != file.Catalog {
			// catalog:tag@sha256:… (an older resolve --write): the tag is
			// what moves, the bundle is what is pinned.
			p.edits = append(p.edits, specedit.Edit{Key: "catalog", Value: unpinned.Catalog})
		}
		p.lines = append(p.lines, [2]string{"version", c.Version}, [2]string{"bundle", rv.Origin.Image})
		p.edits = append(p.edits,
			specedit.Edit{Key: "version", Value: c.Version, After: "package"},
			specedit.Edit{Key: "digest", Value: digest, After: "version"})
		p.want = func(got spec.Spec) bool {
			return got.Catalog == unpinned.Catalog && got.Version == c.Version && got.Digest == digest
		}
		return p
	case rv.Origin.Image == "":
		return pin{
			lines: [][2]string{{"bundle", file.Bundle}, {"digest", rv.Origin.Digest}},
			note:  fmt.Sprintf("spec.bundle %q is a directory: it is already pinned by its content (the digest above), and by Git", file.Bundle),
		}
	default:
		p := pin{lines: [][2]string{{"bundle", rv.Origin.Image}}}
		repo, tag := splitTag(unpinned.Bundle)
		if tag == "" {
			tag = unpinned.Version
		}
		if strings.Contains(repo, "@") && tag == "" {
			p.note = fmt.Sprintf("spec.bundle %q is pinned by its digest alone: nothing moves", file.Bundle)
			return p
		}
		if repo != file.Bundle {
			p.edits = append(p.edits, specedit.Edit{Key: "bundle", Value: repo})
		}
		after := "bundle"
		if tag != "" {
			p.edits = append(p.edits, specedit.Edit{Key: "version", Value: tag, After: "bundle"})
			after = "version"
		}
		p.edits = append(p.edits, specedit.Edit{Key: "digest", Value: digest, After: after})
		p.want = func(got spec.Spec) bool { return got.Bundle == repo && got.Version == tag && got.Digest == digest }
		return p
	}
}

// splitTag splits an image reference without a digest (render.Unpinned's
// bundle, or one pinned by digest alone) into the repository as spelled and
// its tag; a digest-only reference stays whole.
func splitTag(ref string) (repo, tag string) {
	if strings.Contains(ref, "@") {
		return ref, ""
	}
	t, err := name.NewTag(ref, name.WithDefaultTag(""))
	if err != nil || t.TagStr() == "" {
		return ref, ""
	}
	return strings.TrimSuffix(ref, ":"+t.TagStr()), t.TagStr()
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
	target, err := writeAtomic(file, out)
	if err != nil {
		return fmt.Errorf("resolve --write: %w", err)
	}
	if target != file {
		fmt.Fprintf(w, "pinned %s (in %s, which the symbolic link %s leads to: every spec that shares it is pinned)\n", file, target, file)
		return nil
	}
	fmt.Fprintf(w, "pinned %s\n", file)
	return nil
}

// writeAtomic is specedit.WriteFile: the file replaced atomically, a
// symbolic link written through.
func writeAtomic(file string, data []byte) (target string, err error) {
	return specedit.WriteFile(file, data)
}
