package tenancy

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// RefusalError is the tenancy policy refusing a render: one line naming the
// project, what it asked for, the policy entry and the fix. Transports
// report it as PermissionDenied, as a signature refusal.
type RefusalError struct {
	// Project is the project as asked (escaped in the message).
	Project string
	// Problem says what was refused and by which entry; Fix what to do.
	Problem, Fix string
}

func (e *RefusalError) Error() string {
	return fmt.Sprintf("project %s %s; fix: %s", echo.Quote(e.Project), e.Problem, e.Fix)
}

// Tenant is a project as the policy sees it: the entry that covers it, or
// none (an unlisted project under unlistedProjects: allow). It implements
// render.Admission.
type Tenant struct {
	Project string
	// Entry is the entry covering Project; nil when none does and the
	// policy allows unlisted projects (today's behaviour).
	Entry  *Project
	Policy *Policy
}

// Tenant returns the tenant of project: its entry, or a *RefusalError when
// none covers it and unlisted projects are denied, or the name is none an
// AppProject can have. project "" is a request that named none.
func (p *Policy) Tenant(project string) (*Tenant, error) {
	base := filepath.Base(p.Name)
	if project == "" {
		if p.Unlisted == Allow {
			return &Tenant{Policy: p}, nil
		}
		return nil, &RefusalError{Project: "", Problem: fmt.Sprintf("is no Argo CD project (the request named none), and tenancy policy %s has unlistedProjects: deny", base),
			Fix: "render through Argo CD (the repo-server sends ARGOCD_APP_PROJECT_NAME), or pass --project NAME to the command"}
	}
	if err := CheckProjectName(project); err != nil {
		return nil, &RefusalError{Project: project, Problem: fmt.Sprintf("%s, so tenancy policy %s cannot match it", err, base),
			Fix: "check what sets ARGOCD_APP_PROJECT_NAME (only the repo-server may), or the --project value"}
	}
	if e := p.Match(project); e != nil {
		return &Tenant{Project: project, Entry: e, Policy: p}, nil
	}
	if p.Unlisted == Allow {
		return &Tenant{Project: project, Policy: p}, nil
	}
	return nil, &RefusalError{Project: project, Problem: fmt.Sprintf("may render nothing with olm-cmp: no entry of tenancy policy %s names it, and unlistedProjects is deny", base),
		Fix: fmt.Sprintf("ask the cluster admin to add an entry with name: %s (docs/tenancy.md)", project)}
}

// Label names the tenant in metrics: its entry's name (a bounded set: the
// policy's entries), or "(unlisted)"; never the project name itself.
func (t *Tenant) Label() string {
	if t == nil || t.Entry == nil {
		return "(unlisted)"
	}
	return t.Entry.Name
}

// Key is the tenant's part of a render cache key: the policy's hash and
// the entry (or unlisted), so that an edited policy or another entry never
// shares a cached render by accident.
func (t *Tenant) Key() string {
	if t == nil || t.Policy == nil {
		return ""
	}
	return t.Policy.Hash() + " " + t.Entry.Hash()
}

func (t *Tenant) describe() string { return t.Entry.Describe(t.Policy.Name) }

// Image implements render.Admission: a bundle image must be under the
// entry's images, a catalog image under one of its catalogs.
func (t *Tenant) Image(role, what, ref string) error {
	e := t.Entry
	if e == nil {
		return nil
	}
	if role == render.RoleCatalog {
		if e.CatalogFor(ref) != nil {
			return nil
		}
		return &RefusalError{Project: t.Project,
			Problem: fmt.Sprintf("may not use %s: %s allows %s", what, t.describe(), list("catalogs", catalogImages(e))),
			Fix:     "use one of those catalogs, or ask the cluster admin to add this catalog with its packages to that entry's catalogs"}
	}
	if e.ImageAllowed(ref) {
		return nil
	}
	return &RefusalError{Project: t.Project,
		Problem: fmt.Sprintf("may not render %s: %s allows %s", what, t.describe(), list("bundle images from", e.Images)),
		Fix:     fmt.Sprintf("use an image from there, or ask the cluster admin to add %s (or its registry) to that entry's images", echo.Short(trust.NormalizeRepo(ref)))}
}

// Package implements render.Admission: the catalog entry covering an
// image catalog must list pkg; a directory catalog is judged by every
// catalog entry (its images are the project's own, its packages not).
func (t *Tenant) Package(catalog, pkg string) error {
	e := t.Entry
	if e == nil {
		return nil
	}
	cats := e.Catalogs
	if !render.IsDirRef(catalog) {
		if c := e.CatalogFor(catalog); c != nil {
			cats = []*Catalog{c}
		}
	}
	var names []string
	for _, c := range cats {
		if c.PackageAllowed(pkg) {
			return nil
		}
		names = append(names, c.Packages...)
	}
	return &RefusalError{Project: t.Project,
		Problem: fmt.Sprintf("may not choose package %s from spec.catalog %s: %s allows %s", echo.Quote(pkg), echo.Quote(catalog), t.describe(), list("packages", names)),
		Fix:     fmt.Sprintf("choose one of those, or ask the cluster admin to add %s to that entry's catalog packages", echo.Quote(pkg))}
}

// Directory implements render.Admission.
func (t *Tenant) Directory(what, ref string) error {
	e := t.Entry
	if e == nil || e.Directories {
		return nil
	}
	return &RefusalError{Project: t.Project,
		Problem: fmt.Sprintf("may not render the directory bundle %s: %s does not allow directories", what, t.describe()),
		Fix:     "render a bundle image the entry allows, or ask the cluster admin to set directories: true on that entry"}
}

// list writes what an entry allows, capped: "bundle images from a, b only",
// or "no bundle images" when empty.
func list(what string, items []string) string {
	if len(items) == 0 {
		return "no " + strings.TrimSuffix(what, " from")
	}
	const maxShown = 5
	shown := items
	more := ""
	if len(shown) > maxShown {
		shown, more = shown[:maxShown], fmt.Sprintf(" and %d more", len(items)-maxShown)
	}
	return fmt.Sprintf("%s %s%s only", what, strings.Join(shown, ", "), more)
}

func catalogImages(e *Project) []string {
	var out []string
	for _, c := range e.Catalogs {
		out = append(out, c.Image)
	}
	return out
}
