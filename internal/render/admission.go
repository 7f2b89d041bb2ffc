package render

import (
	"fmt"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Admission decides whether the project asking for a render may use what
// its spec names, before any registry call or read of it: the tenancy
// policy (internal/tenancy) implements it. Each method returns nil or the
// refusal, one line naming the project, the image or package, the policy
// entry and the fix.
type Admission interface {
	// Image is asked before the image ref is resolved: a bundle (role
	// RoleBundle: the spec's, or the one a catalog chose) or a catalog
	// (RoleCatalog). what names it as the user wrote it.
	Image(role, what, ref string) error
	// Package is asked before the catalog image or directory catalog is
	// opened, for the package the spec chooses from it.
	Package(catalog, pkg string) error
	// Directory is asked before a directory bundle is read.
	Directory(what, ref string) error
}

// admitSpec asks r.Admit about what req's spec names: its catalog and
// package, or its bundle image or directory. A catalog's chosen bundle is
// asked about in resolveBundle, once chosen. A directory catalog is
// asked about its package only: the bundle images it chooses are asked
// about as any other.
func (r *Renderer) admitSpec(req Request) error {
	a := r.Admit
	if a == nil {
		return nil
	}
	s := req.Spec
	if s.Catalog != "" {
		if !IsDirRef(s.Catalog) {
			if err := a.Image(RoleCatalog, fmt.Sprintf("spec.catalog %s", echo.Quote(s.Catalog)), s.Catalog); err != nil {
				return err
			}
		}
		return a.Package(s.Catalog, s.Package)
	}
	if IsDirRef(s.Bundle) {
		return a.Directory(fmt.Sprintf("spec.bundle %s", echo.Quote(s.Bundle)), s.Bundle)
	}
	return a.Image(RoleBundle, fmt.Sprintf("spec.bundle %s", echo.Quote(s.Bundle)), s.Bundle)
}
