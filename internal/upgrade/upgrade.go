// Package upgrade finds the version each application directory may move to
// and writes the bump where the repository keeps the version: olm-cmp.yaml
// (spec.version, the tag of spec.bundle, the digest pin), or the version
// parameter an Argo CD Application or ApplicationSet list element passes to
// the plugin (locate.go). The choice follows OLM: from a catalog, OLM v1's
// successors within the spec's channels and version range, or OLM v0's one
// hop along the channel (internal/versions); for an image bundle without a
// catalog, the repository's newer semver tags whose CSVs name the running
// one in replaces, skips or olm.skipRange. The bump is judged by the same
// safety check as `olm-cmp diff` (render.CheckUpgrade) before it is written,
// and written whole (version, digest and upgradeFrom together) or not at
// all.
package upgrade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/safety"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Policy is how the next version is chosen from a catalog.
type Policy string

const (
	// OLMv1 takes the best of the installed bundle's successors (OLM v1's
	// rule: replaces, skips or skipRange name it; deprecated last, then the
	// highest) within the spec's channels and version range.
	OLMv1 Policy = "olmv1"
	// OLMv0 takes one hop along the channel's replaces graph, as a v0
	// Subscription with automatic approval does.
	OLMv0 Policy = "olmv0"
)

// Status of one application.
type Status string

const (
	None      Status = "none"      // nothing to move to
	Available Status = "available" // an upgrade, safe (not written)
	Written   Status = "written"   // an upgrade, safe, written
	Blocked   Status = "blocked"   // an upgrade the safety check (or its render) refuses; written with --write all the same, for a draft pull request that says why
	Failed    Status = "failed"    // upgrade could not decide
)

// Report is upgrade's answer for every directory; its JSON form is
// `olm-cmp upgrade -o json` (docs/upgrade.md), which the bot reads.
type Report struct {
	Applications []Result `json:"applications"`
}

// Result is one application directory.
type Result struct {
	Dir string `json:"dir"`
	// Package is the OLM package (the catalog's, else the bundle's).
	Package string `json:"package"`
	// Current is the version rendered today, as the repository writes it
	// (an image tag, or a catalog version); Chosen the one it would move
	// to, "" for none.
	Current string `json:"current"`
	Chosen  string `json:"chosen"`
	// Where says where the version lives: olm-cmp.yaml, or an Argo CD
	// application's parameter or list element (file and line).
	Where      string      `json:"where,omitempty"`
	Candidates []Candidate `json:"candidates"`
	Status     Status      `json:"status"`
	// Reason explains a none, blocked or failed status.
	Reason string `json:"reason,omitempty"`
	// Files are the files written (or, without --write, that would be).
	Files []string `json:"files"`
	// Digest is Chosen's bundle image digest, the pin written beside it.
	Digest string  `json:"digest,omitempty"`
	Safety *Safety `json:"safety,omitempty"`
	// OtherRepos are the Argo CD applications whose source path is Dir
	// but whose repoURL is another Git repository: they render that
	// repository's directory, so upgrade neither reads nor writes them.
	OtherRepos []OtherRepo `json:"otherRepos,omitempty"`
	// ByPath names the applications matched to Dir by path alone, and why:
	// their repoURL could not be compared with this repository's (no Git
	// remote and no --repo-url, or a repoURL upgrade cannot read).
	ByPath []string `json:"byPath,omitempty"`
}

// OtherRepo is an application skipped for naming another repository.
type OtherRepo struct {
	// Application names it and its place: "Application x (argocd/x.yaml:1)".
	Application string `json:"application"`
	File        string `json:"file"`
	RepoURL     string `json:"repoURL"`
}

// Candidate is a version the application may move to, with the edges that
// allow it: "replaces NAME", "skips NAME", "skipRange RANGE".
type Candidate struct {
	Version    string   `json:"version"`
	Edges      []string `json:"edges"`
	Deprecated bool     `json:"deprecated"`
}

// Safety is the safety check of Current -> Chosen (`olm-cmp diff`'s).
type Safety struct {
	// Verdict is safe, warnings or blocked.
	Verdict string `json:"verdict"`
	// UpgradeConstraintPolicy is the spec's (OLM v1's field): with
	// CatalogProvided, the default, an upgrade edge the graph lacks is an
	// error; with SelfCertified, a warning.
	UpgradeConstraintPolicy string           `json:"upgradeConstraintPolicy"`
	Findings                []safety.Finding `json:"findings"`
}

// Options configure Run.
type Options struct {
	Policy Policy
	// Write makes the bump in the repository's files.
	Write bool
	// Loader pulls bundles, catalogs and tag lists.
	Loader *bundle.ImageLoader
	// Admit, when set, is the tenancy policy's judgement of the project the
	// Applications belong to (upgrade --project): what it refuses, the
	// plugin would refuse, so a bump to it is not proposed. With it, Loader
	// is that project's (its own credentials).
	Admit render.Admission
	// Index holds the repository's Argo CD applications (Scan); nil when
	// only olm-cmp.yaml files hold versions.
	Index *Index

	// memo keeps each catalog package read once per Run: today's choice,
	// the successors, the new version's choice and the safety check's
	// graph share it (a catalog directory has no on-disk index).
	memo *catalog.Memo
}

// Run plans (and with Write, writes) the upgrade of each directory, in the
// order given. Two directories of one package are each upgraded on their
// own (a staging and a production copy, say), and each says so.
func Run(ctx context.Context, o Options, dirs []string) *Report {
	rep := &Report{Applications: []Result{}}
	o.memo = catalog.NewMemo()
	for _, d := range dirs {
		rep.Applications = append(rep.Applications, o.one(ctx, d))
	}
	byPkg := map[string][]int{}
	for i, r := range rep.Applications {
		if r.Package != "" {
			byPkg[r.Package] = append(byPkg[r.Package], i)
		}
	}
	for pkg, idx := range byPkg {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			var others []string
			for _, j := range idx {
				if j != i {
					others = append(others, rep.Applications[j].Dir)
				}
			}
			addNote(&rep.Applications[i], fmt.Sprintf("package %s is also in %s: each directory is upgraded on its own", pkg, strings.Join(others, ", ")))
		}
	}
	return rep
}

// ExitStatus is the command's exit status for a report: 1 when an
// application failed, else 3 when an upgrade is blocked, else 2 when one is
// available or written, else 0.
func (r *Report) ExitStatus() int {
	code := 0
	for _, a := range r.Applications {
		switch a.Status {
		case Failed:
			return 1
		case Blocked:
			code = 3
		case Available, Written:
			if code == 0 {
				code = 2
			}
		}
	}
	return code
}

func (o Options) one(ctx context.Context, dir string) (res Result) {
	res = Result{Dir: dir, Candidates: []Candidate{}, Files: []string{}}
	fail := func(err error) Result {
		res.Status, res.Reason = Failed, echo.Text(err.Error())
		return res
	}
	data, err := readSpec(dir)
	if err != nil {
		return fail(err)
	}
	t, err := loadTarget(o.Index, dir, data)
	if err != nil {
		return fail(err)
	}
	res.Where = t.where()
	for _, a := range t.elsewhere {
		res.OtherRepos = append(res.OtherRepos, OtherRepo{Application: a.String(), File: a.File, RepoURL: a.RepoURL})
	}
	for _, a := range t.matched {
		if !a.ByPath {
			continue
		}
		why := "this checkout has no Git remote (but local paths) to compare its repoURL with (name the repository with --repo-url)"
		if len(o.Index.repos) > 0 {
			why = "its repoURL " + echo.Quote(a.RepoURL) + " is not a URL upgrade can compare with this repository's"
		}
		res.ByPath = append(res.ByPath, a.String()+": matched by its path alone, "+why)
	}
	if len(t.apps) > 1 {
		defer func() {
			if res.Status != Failed {
				addNote(&res, fmt.Sprintf("%d Argo CD applications render %s at one version: upgrade moves them together (every place in where)", len(t.apps), dir))
			}
		}()
	}
	r := &render.Renderer{Loader: o.Loader, CatalogMemo: o.memo, Admit: o.Admit}
	cur := t.spec
	cur.UpgradeFrom = "" // what runs today, not the last bump's check
	req := render.Request{Spec: cur, Name: t.file.Metadata.Name, SourceDir: dir}
	rv, err := r.Resolve(ctx, req)
	if err != nil {
		return fail(fmt.Errorf("what %s renders today: %w", dir, req.Locate(err)))
	}
	from, err := r.Load(ctx, rv)
	if err != nil {
		return fail(fmt.Errorf("what %s renders today: %w", dir, err))
	}
	res.Package = from.Package
	if rv.Origin.Image == "" {
		res.Current = from.CSV.Spec.Version.String()
		res.Status = None
		res.Reason = fmt.Sprintf("spec.bundle %s is a directory: it holds one version; replace the directory to move", echo.Quote(cur.Bundle))
		return res
	}
	var f found
	if cur.Catalog != "" {
		res.Package = cur.Package
		f, err = o.fromCatalog(ctx, r, t, rv)
	} else {
		f, err = o.fromTags(ctx, t, from)
	}
	res.Current, res.Candidates = f.current, f.candidates
	if res.Candidates == nil {
		res.Candidates = []Candidate{}
	}
	if err != nil {
		return fail(err)
	}
	if f.chosen == "" {
		res.Status, res.Reason = None, f.reason
		return res
	}
	res.Chosen = f.chosen

	// TO: the spec with the chosen version and no pin yet; its digest is
	// what the tag (or the catalog) names now.
	to := cur
	to.Digest = ""
	if to.Catalog != "" {
		to.Version = f.chosen
	} else {
		repo, _, _, err := render.ImageParts(to.Bundle)
		if err != nil {
			return fail(err)
		}
		to.Bundle, to.Version = repo, f.chosen
	}
	treq := req
	treq.Spec = to
	toRV, err := r.Resolve(ctx, treq)
	if err != nil {
		return fail(fmt.Errorf("version %s: %w", f.chosen, err))
	}
	toB, err := r.Load(ctx, toRV)
	if err != nil {
		return fail(fmt.Errorf("version %s: %w", f.chosen, err))
	}
	res.Digest = toRV.Origin.Digest
	findings, _, err := r.CheckUpgrade(ctx, toRV, from, toB)
	if err != nil {
		return fail(fmt.Errorf("checking the upgrade from %s to %s: %w", res.Current, f.chosen, err))
	}
	res.Safety = verdict(findings)
	res.Safety.UpgradeConstraintPolicy = to.UpgradePolicy()
	res.Status = Available
	if o.Write {
		res.Status = Written
	}
	if res.Safety.Verdict == "blocked" {
		res.Status = Blocked
		res.Reason = fmt.Sprintf("the upgrade from %s to %s is unsafe: %s", res.Current, f.chosen, firstError(findings))
	} else if _, err := r.RenderLoaded(ctx, toRV, toB); err != nil {
		// The new version must render as Argo CD will render it.
		res.Status = Blocked
		res.Reason = fmt.Sprintf("version %s does not render: %s", f.chosen, echo.Text(req.Locate(err).Error()))
	}

	files, err := t.plan(o.Index, bump{version: f.chosen, digest: res.Digest, from: res.Current})
	if err != nil {
		return fail(err)
	}
	for _, e := range files {
		res.Files = append(res.Files, e.path)
	}
	if o.Write {
		if err := write(files); err != nil {
			return fail(err)
		}
		// The next directory may be in a manifest just written (an
		// ApplicationSet listing several): it reads the new bytes.
		for _, e := range files {
			if e.key != "" {
				o.Index.replace(e.key, e.data)
			}
		}
	}
	return res
}

// addNote adds a note to r's reason.
func addNote(r *Result, note string) {
	if r.Reason == "" {
		r.Reason = note
	} else {
		r.Reason += "; " + note
	}
}

// readSpec reads dir/olm-cmp.yaml within spec's size bound.
func readSpec(dir string) ([]byte, error) {
	if _, err := spec.Load(dir); err != nil {
		var fe *spec.FileError
		if !errors.As(err, &fe) {
			return nil, err
		}
	}
	return os.ReadFile(filepath.Join(dir, spec.FileName))
}

func verdict(fs []safety.Finding) *Safety {
	s := &Safety{Verdict: "safe", Findings: fs}
	if s.Findings == nil {
		s.Findings = []safety.Finding{}
	}
	switch {
	case safety.HasErrors(fs):
		s.Verdict = "blocked"
	case len(fs) > 0:
		s.Verdict = "warnings"
	}
	return s
}

func firstError(fs []safety.Finding) string {
	n := 0
	first := ""
	for _, f := range fs {
		if f.Fails(safety.Error) {
			if n++; first == "" {
				first = f.String()
			}
		}
	}
	if n > 1 {
		first += fmt.Sprintf(" (and %d more errors)", n-1)
	}
	return first
}

// found is what a policy found: the version rendered today as the
// repository writes it, the candidates, the chosen one ("" for none) and,
// then, why.
type found struct {
	current    string
	candidates []Candidate
	chosen     string
	reason     string
}
