package upgrade

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/specedit"
)

// bump is what a write sets: the version moved to (an image tag, or a
// catalog version), the digest of its bundle image (the pin, which always
// moves with the version: a pin left behind would make the render refuse
// the new version, and a version without its pin would render whatever the
// tag names when the plugin runs, not the image the safety check judged),
// and upgradeFrom, the version being left.
type bump struct {
	version, digest, from string
}

// edited is one file's new content.
type edited struct {
	path      string // as the report names it
	disk      string // where it is on disk
	key       string // a manifest's name in the Index; "" for olm-cmp.yaml
	old, data []byte
}

// plan computes the files a bump changes, each checked by reading it back
// as olm-cmp and Argo CD would (the effective spec must say exactly what was
// meant) before anything is written: a write is whole or absent.
func (t *target) plan(ix *Index, b bump) ([]edited, error) {
	var specEdits []specedit.Edit
	var repl map[string][]specedit.Replacement // manifest file -> replacements
	inApp := t.versionInApp()
	var bad error
	slot := func(s *Slot, v string) bool {
		if s == nil {
			return false
		}
		if s.Node.Line == 0 && bad == nil {
			// A value built by a template from several parts ('v{{.version}}'):
			// no one place holds it.
			bad = fmt.Errorf("%s: %s is a template of several parts (%s): upgrade edits a plain value or a whole {{.key}}; set it to %s by hand", t.app, s.Where, echo.Quote(s.Template), echo.Quote(v))
		}
		if repl == nil {
			repl = map[string][]specedit.Replacement{}
		}
		repl[t.app.File] = append(repl[t.app.File], specedit.Replacement{Node: s.Node, Value: v})
		return true
	}
	if inApp {
		slot(t.app.Version, b.version)
		// An application slot for digest or upgradeFrom holds them beside the
		// version; without one they go to olm-cmp.yaml (applied to the
		// parameter's version, as the plugin does: docs/plugin.md).
		if !slot(t.app.Digest, b.digest) {
			specEdits = append(specEdits, specedit.Edit{Key: "digest", Value: b.digest, After: t.anchor(nil, "version")})
		}
	} else {
		e, err := t.versionEdits(b)
		if err != nil {
			return nil, err
		}
		specEdits = append(specEdits, e...)
		if t.app != nil && t.app.Digest != nil && t.app.Digest.Value() != "" {
			// An application's digest overrides the file's: it moves too.
			slot(t.app.Digest, b.digest)
		}
	}
	if !(t.app != nil && t.app.UpgradeFr != nil && (inApp || t.app.UpgradeFr.Value() != "") && slot(t.app.UpgradeFr, b.from)) {
		specEdits = append(specEdits, specedit.Edit{Key: "upgradeFrom", Value: b.from, After: t.anchor(specEdits, "digest", "version")})
	}

	if bad != nil {
		return nil, bad
	}
	var out []edited
	if len(specEdits) > 0 {
		data, err := specedit.Apply(t.data, specEdits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: make the change by hand", t.specFile, err)
		}
		if !bytes.Equal(data, t.data) {
			out = append(out, edited{path: shown(t.specFile), disk: t.specFile, old: t.data, data: data})
		}
	}
	for _, file := range slices.Sorted(maps.Keys(repl)) {
		old, err := ix.File(file)
		if err != nil {
			return nil, err
		}
		data, err := specedit.Replace(old, repl[file])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w: make the change by hand", file, t.app.What, err)
		}
		if !bytes.Equal(data, old) {
			disk := filepath.Join(ix.Root, filepath.FromSlash(file))
			out = append(out, edited{path: shown(disk), disk: disk, key: file, old: old, data: data})
		}
	}
	return out, t.check(ix, out, b)
}

// versionEdits are the olm-cmp.yaml edits that move its version: the tag
// where the file writes it (spec.version, or the tag of spec.bundle) and the
// digest where the file pins it (spec.digest, or the reference's own).
func (t *target) versionEdits(b bump) ([]specedit.Edit, error) {
	fs := t.file.Spec
	if fs.Catalog != "" {
		return []specedit.Edit{
			{Key: "version", Value: b.version, After: "package"},
			{Key: "digest", Value: b.digest, After: "version"},
		}, nil
	}
	repo, tag, digest, err := imageParts(fs.Bundle)
	if err != nil {
		return nil, fmt.Errorf("%s: spec.bundle: %w", t.specFile, err)
	}
	switch {
	case tag != "" || digest != "" && fs.Version == "":
		// repo:tag, repo:tag@sha256:… or repo@sha256:…: the reference holds
		// the version; its digest (when it has one) is the pin.
		ref := repo + ":" + b.version
		edits := []specedit.Edit{{Key: "bundle", Value: ref}}
		if digest != "" {
			edits[0].Value = ref + "@" + b.digest
			if fs.Digest != "" {
				edits = append(edits, specedit.Edit{Key: "digest", Delete: true})
			}
			return edits, nil
		}
		return append(edits, specedit.Edit{Key: "digest", Value: b.digest, After: "bundle"}), nil
	case digest != "":
		// repo@sha256:… with spec.version: the reference pins.
		return []specedit.Edit{
			{Key: "bundle", Value: repo + "@" + b.digest},
			{Key: "version", Value: b.version, After: "bundle"},
		}, nil
	}
	return []specedit.Edit{
		{Key: "version", Value: b.version, After: "bundle"},
		{Key: "digest", Value: b.digest, After: "version"},
	}, nil
}

// anchor is the key a new line goes below: the first of keys that the file
// has or that edits add, else spec.bundle or spec.package.
func (t *target) anchor(edits []specedit.Edit, keys ...string) string {
	fs := t.file.Spec
	has := map[string]bool{"digest": fs.Digest != "", "version": fs.Version != ""}
	for _, k := range keys {
		if has[k] || slices.ContainsFunc(edits, func(e specedit.Edit) bool { return e.Key == k && !e.Delete }) {
			return k
		}
	}
	if fs.Catalog != "" {
		return "package"
	}
	return "bundle"
}

// check reads the edited files back, the spec as olm-cmp parses it and the
// manifests as upgrade found them, and refuses edits after which the
// effective spec does not say exactly version, digest and upgradeFrom.
func (t *target) check(ix *Index, out []edited, b bump) error {
	data := t.data
	nix := ix
	for _, e := range out {
		if e.key == "" {
			data = e.data
			continue
		}
		if nix == ix {
			nix = ix.clone()
		}
		nix.replace(e.key, e.data)
	}
	nt, err := loadTarget(nix, t.dir, data)
	if err == nil {
		s := nt.spec
		_, tag, digest, perr := imageTag(s)
		got := bump{version: s.Version, digest: s.Digest, from: s.UpgradeFrom}
		if s.Catalog == "" && perr == nil {
			got.version = tag
			if got.digest == "" {
				got.digest = digest
			}
		}
		if got != b {
			err = fmt.Errorf("they would say version %q, digest %q, upgradeFrom %q", got.version, got.digest, got.from)
		}
	}
	if err != nil {
		return fmt.Errorf("could not edit %s safely (%v): set version %s, digest %s and upgradeFrom %s by hand", t.where(), err, b.version, b.digest, b.from)
	}
	return nil
}

// write writes the edited files, each atomically (specedit.WriteFile),
// after checking that none changed since it was read: a bump is written
// whole, or (a file edited meanwhile) not at all.
func write(files []edited) error {
	for _, e := range files {
		cur, err := os.ReadFile(e.disk)
		if err != nil {
			return err
		}
		if !bytes.Equal(cur, e.old) {
			return fmt.Errorf("%s changed while upgrade ran: nothing was written; run upgrade again", e.path)
		}
	}
	for i, e := range files {
		if _, err := specedit.WriteFile(e.disk, e.data); err != nil {
			done := ""
			if i > 0 {
				done = fmt.Sprintf(" (%s written: restore it with git checkout)", files[0].path)
			}
			return fmt.Errorf("writing %s: %w%s", e.path, err, done)
		}
	}
	return nil
}

// shown is how the report names a file upgrade writes: relative to the
// working directory when it is below it (what a bot's git add takes),
// else as it is.
func shown(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}
