package render

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/specedit"
)

// Pin is what a spec resolves to (`olm-cmp resolve`), and the edits of
// olm-cmp.yaml that pin it (`resolve --write`).
type Pin struct {
	lines [][2]string // label, value: what resolve prints
	edits []specedit.Edit
	// want is the spec the edits must produce, checked before writing.
	want func(spec.Spec) bool
	// note explains why there is nothing to write.
	note string
}

// PinOf is the pin of rv, resolved from unpinned (the spec without its
// pins: Unpinned); file is the spec as the file has it.
func PinOf(file, unpinned spec.Spec, rv Resolved) Pin {
	digest := rv.Origin.Digest
	switch {
	case rv.Catalog != nil:
		c := rv.Catalog
		p := Pin{lines: [][2]string{{"catalog", c.Ref}}}
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
		return Pin{
			lines: [][2]string{{"bundle", file.Bundle}, {"digest", rv.Origin.Digest}},
			note:  fmt.Sprintf("spec.bundle %q is a directory: it is already pinned by its content (the digest above), and by Git", file.Bundle),
		}
	default:
		p := Pin{lines: [][2]string{{"bundle", rv.Origin.Image}}}
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

// Print prints what the spec resolves to, a line per value.
func (p Pin) Print(w io.Writer) {
	for _, l := range p.lines {
		fmt.Fprintf(w, "%-8s %s\n", l[0]+":", l[1])
	}
}

// Write makes the edits in file (the olm-cmp.yaml resolved), atomically,
// unless they change nothing, and says what it did on w. The edited file is
// read back before it is written: one olm-cmp cannot parse, or that does not
// say what was meant, is never written.
func (p Pin) Write(w io.Writer, file string) error {
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
	target, err := specedit.WriteFile(file, out) // a symbolic link written through
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
