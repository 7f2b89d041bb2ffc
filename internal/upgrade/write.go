package upgrade

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
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
// meant) before anything is written: a write is whole or absent. Several
// applications of the directory (t.apps) each get their places written.
func (t *target) plan(ix *Index, b bump) ([]edited, error) {
	apps := slices.Clone(t.apps)
	if len(apps) == 0 {
		apps = []*App{t.app}
	}
	// Applications that render the file's version first: their edits of
	// olm-cmp.yaml (the version itself) are the ones the others' anchor on.
	slices.SortStableFunc(apps, func(x, y *App) int {
		switch {
		case inApp(x) == inApp(y):
			return 0
		case inApp(y):
			return -1
		}
		return 1
	})
	var specEdits []specedit.Edit
	repl := map[string][]specedit.Replacement{} // manifest file -> replacements
	what := map[string]string{}                 // manifest file -> an application in it
	for _, a := range apps {
		es, rs, err := t.appEdits(a, b, specEdits)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			i := slices.IndexFunc(specEdits, func(o specedit.Edit) bool { return o.Key == e.Key })
			switch {
			case i < 0:
				specEdits = append(specEdits, e)
			case specEdits[i].Value != e.Value || specEdits[i].Delete != e.Delete:
				return nil, fmt.Errorf("could not edit %s safely (its applications need spec.%s both %q and %q): set version %s, digest %s and upgradeFrom %s by hand", t.where(), e.Key, specEdits[i].Value, e.Value, b.version, b.digest, b.from)
			}
		}
		if len(rs) > 0 {
			repl[a.File] = append(repl[a.File], rs...)
			what[a.File] = a.What
		}
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
			return nil, fmt.Errorf("%s: %s: %w: make the change by hand", file, what[file], err)
		}
		if !bytes.Equal(data, old) {
			disk := filepath.Join(ix.Root, filepath.FromSlash(file))
			out = append(out, edited{path: shown(disk), disk: disk, key: file, old: old, data: data})
		}
	}
	root := ""
	if ix != nil {
		root = ix.Root
	} else {
		var err error
		if root, err = RepoRoot(t.dir); err != nil {
			return nil, err
		}
	}
	for _, e := range out {
		if err := insideRepo(root, e); err != nil {
			return nil, err
		}
	}
	return out, t.check(ix, out, b)
}

// appEdits are the edits that move application a (nil: the file alone) to
// b: olm-cmp.yaml's, and the replacements in a's manifest. prior are the
// olm-cmp.yaml edits other applications of the directory already make.
func (t *target) appEdits(a *App, b bump, prior []specedit.Edit) ([]specedit.Edit, []specedit.Replacement, error) {
	var specEdits []specedit.Edit
	var repl []specedit.Replacement
	in := inApp(a)
	var bad error
	slot := func(s *Slot, v string) bool {
		if s == nil {
			return false
		}
		if s.Node.Line == 0 && bad == nil {
			// A value built by a template from several parts ('v{{.version}}'):
			// no one place holds it.
			bad = fmt.Errorf("%s: %s is a template of several parts (%s): upgrade edits a plain value or a whole {{.key}}; set it to %s by hand", a, s.Where, echo.Quote(s.Template), echo.Quote(v))
		}
		repl = append(repl, specedit.Replacement{Node: s.Node, Value: v})
		return true
	}
	if in {
		slot(a.Version, b.version)
		// An application slot for digest or upgradeFrom holds them beside the
		// version; without one they go to olm-cmp.yaml (applied to the
		// parameter's version, as the plugin does: docs/plugin.md).
		if !slot(a.Digest, b.digest) {
			specEdits = append(specEdits, specedit.Edit{Key: "digest", Value: b.digest, After: t.anchor(prior, "version")})
		}
	} else {
		e, err := t.versionEdits(b)
		if err != nil {
			return nil, nil, err
		}
		specEdits = append(specEdits, e...)
		if a != nil && a.Digest != nil && a.Digest.Value() != "" {
			// An application's digest overrides the file's: it moves too.
			slot(a.Digest, b.digest)
		}
	}
	if !(a != nil && a.UpgradeFr != nil && (in || a.UpgradeFr.Value() != "") && slot(a.UpgradeFr, b.from)) {
		specEdits = append(specEdits, specedit.Edit{Key: "upgradeFrom", Value: b.from, After: t.anchor(append(slices.Clip(prior), specEdits...), "digest", "version")})
	}
	return specEdits, repl, bad
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
	repo, tag, digest, err := render.ImageParts(fs.Bundle)
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

// writeFile is specedit.WriteFile; a test replaces it to fail one write.
var writeFile = specedit.WriteFile

// write writes the edited files, each atomically (specedit.WriteFile),
// after checking that none changed since it was read and that each can be
// written (a read-only file is the user's "do not touch"): a bump is written
// whole, or not at all. A write that fails midway (a full disk) puts back
// the files already written.
func write(files []edited) error {
	for _, e := range files {
		cur, err := os.ReadFile(e.disk)
		if err != nil {
			return err
		}
		if !bytes.Equal(cur, e.old) {
			return fmt.Errorf("%s changed while upgrade ran: nothing was written; run upgrade again", e.path)
		}
		if err := writable(e.disk); err != nil {
			return fmt.Errorf("%s is read-only: nothing was written; make it writable (chmod u+w) or change it by hand", e.path)
		}
	}
	for i, e := range files {
		if _, err := writeFile(e.disk, e.data); err != nil {
			msg := fmt.Sprintf("writing %s: %v: nothing was written", e.path, unwrapPath(err))
			for _, done := range files[:i] {
				if _, rerr := writeFile(done.disk, done.old); rerr != nil {
					msg = fmt.Sprintf("writing %s: %v; %s was written and could not be put back: restore it with git checkout", e.path, unwrapPath(err), done.path)
				}
			}
			return errors.New(msg)
		}
	}
	return nil
}

// writable reports whether file (through a symbolic link: its target) may
// be written by this process: opened for writing (no O_TRUNC: it is left as
// it is) and closed.
func writable(file string) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// unwrapPath drops an *fs.PathError's operation and path (the message names
// the file already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// insideRepo refuses a file upgrade would write outside the repository
// root: an olm-cmp.yaml that is a symbolic link out of it (write through
// the link would change a file no pull request shows).
func insideRepo(root string, e edited) error {
	real, err := filepath.EvalSymlinks(e.disk)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return err
	}
	if r, err := filepath.Abs(root); err == nil {
		root = r
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is a symbolic link to %s, outside the repository %s: upgrade writes only inside the repository; replace the link with the file, or change it by hand", e.path, real, root)
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
