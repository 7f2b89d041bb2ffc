package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Overrides are the spec fields a command line gives (the spec flags of
// render, diff, inspect and health-checks): nil for a flag not given. A
// list replaces the spec's; it is not appended to.
type Overrides struct {
	Bundle, Catalog, Package, Channel, Version *string
	Namespace, CertificateProvider             *string
	WatchNamespaces, ImagePullSecrets, Exclude *[]string
	Strict                                     *bool
}

// Apply sets the fields given; an error names a flag whose value cannot be
// used. A flag replaces what its value makes meaningless in the spec's
// shape (a catalog for --bundle, a pin for another version, a watched
// namespace that was the install namespace); each such replacement is
// returned as a note, for a warning line: nothing changes silently.
func (o Overrides) Apply(s *spec.Spec) (notes []string, err error) {
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	unpin := func(flag, value string) {
		if s.Digest != "" {
			note("%s %s: spec.digest %s pinned the spec's own bundle and is not used", flag, value, s.Digest)
			s.Digest = ""
		}
	}
	if o.Bundle != nil {
		bundle := *o.Bundle
		if s.Catalog != "" && o.Catalog == nil {
			note("--bundle %s replaces the catalog: spec.catalog %q, spec.package %q, spec.channel %q and the version range %q are not used", bundle, s.Catalog, s.Package, s.Channel, s.Version)
			s.Catalog, s.Package, s.Channel = "", "", ""
			if o.Version == nil {
				s.Version = ""
			}
		}
		if !IsLocalDir(bundle) && strings.ContainsAny(bundle, ":@") && s.Version != "" && o.Version == nil && s.Catalog == "" {
			if _, tagged := Untagged(bundle); tagged {
				note("--bundle %s has its own tag or digest: spec.version %q is not used", bundle, s.Version)
				s.Version = ""
			}
		}
		if bundle != s.Bundle {
			unpin("--bundle", bundle)
		}
		if err := SetBundleArg(s, "--bundle", bundle); err != nil {
			return notes, err
		}
	}
	if o.Catalog != nil {
		cat := *o.Catalog
		if s.Bundle != "" && o.Bundle == nil {
			note("--catalog %s replaces the bundle: spec.bundle %q is not used", cat, s.Bundle)
			s.Bundle = ""
			if s.Version != "" && o.Version == nil {
				note("--catalog %s: spec.version %q was the image's tag and is not used (the newest version is chosen; give --version for a range)", cat, s.Version)
				s.Version = ""
			}
		}
		if cat != s.Catalog {
			unpin("--catalog", cat)
		}
		if s.Catalog, err = CatalogArg(cat); err != nil {
			return notes, err
		}
	}
	set(&s.Package, o.Package)
	set(&s.Channel, o.Channel)
	if o.Version != nil && *o.Version != s.Version {
		unpin("--version", *o.Version)
		// An image reference's own tag or digest names the old version.
		if s.Catalog == "" && !IsDirRef(s.Bundle) {
			if repo, tagged := Untagged(s.Bundle); tagged {
				note("--version %s replaces the tag or digest of spec.bundle %q", *o.Version, s.Bundle)
				s.Bundle = repo
			}
		}
	}
	set(&s.Version, o.Version)
	if o.Namespace != nil && o.WatchNamespaces == nil && s.Namespace != "" && *o.Namespace != s.Namespace {
		// A watched namespace that was the install namespace (OwnNamespace)
		// moves with it: left behind, its Roles would go to a namespace
		// nothing creates any more.
		for i, ns := range s.WatchNamespaces {
			if ns == s.Namespace {
				s.WatchNamespaces = slices.Clone(s.WatchNamespaces)
				s.WatchNamespaces[i] = *o.Namespace
				note("-n %s: spec.watchNamespaces[%d] %q was the install namespace and becomes %q too (give --watch-namespace to choose otherwise)", *o.Namespace, i, ns, *o.Namespace)
			}
		}
	}
	set(&s.Namespace, o.Namespace)
	set(&s.WatchNamespaces, o.WatchNamespaces)
	set(&s.ImagePullSecrets, o.ImagePullSecrets)
	set(&s.Exclude, o.Exclude)
	set(&s.CertificateProvider, o.CertificateProvider)
	set(&s.Strict, o.Strict)
	return notes, nil
}

// set is *field = *v when v was given.
func set[T any](field *T, v *T) {
	if v != nil {
		*field = *v
	}
}
