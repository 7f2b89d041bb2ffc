// Package tenancy is the cluster admin's tenancy policy: for each Argo CD
// project (AppProject), by name or glob, the bundle and catalog images its
// Applications may render, the catalog packages they may choose, whether
// directory bundles from Git are allowed, the registry credentials their
// renders use and the trust policy layered on the cluster's. Projects the
// policy does not name get its default: deny, or today's single-tenant
// behaviour (docs/tenancy.md).
//
// The policy is a YAML file mounted beside the trust policy and reloaded the
// same way. This package reads it strictly and bounded (line and field in
// every message), matches a project to its entry, and answers the questions
// a render asks before it reads anything: may this project render this
// image, choose this package, use a directory? A refusal is a *RefusalError,
// one line naming the project, the image or package, the policy entry and
// the fix. Image prefixes are matched as the trust policy matches its
// scopes (trust.NormalizePrefix, trust.Covers): one host spelling means one
// thing in both files. Access to images with the project's own credentials
// is checked by Gate (gate.go).
package tenancy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// APIVersion and Kind name the policy file's format.
const (
	APIVersion = "olm-cmp.dev/v1alpha1"
	Kind       = "TenancyPolicy"
)

// Default is what a project the policy does not name gets.
type Default string

const (
	// Deny refuses every render of a project no entry names (and of a
	// request that names no project).
	Deny Default = "deny"
	// Allow renders as olm-cmp did before tenancy: every image, directory
	// bundles, the sidecar's credentials, the cluster trust policy only.
	Allow Default = "allow"
)

// AnyPackage in a catalog's packages allows every package of that catalog.
const AnyPackage = "*"

// Policy is a loaded tenancy policy; read-only once loaded.
type Policy struct {
	// Name is the file the policy came from; messages show its base name.
	Name string
	// Unlisted is what projects no entry names get.
	Unlisted Default
	// CredentialsDir holds the projects' registry configs (a Secret
	// volume); relative paths in entries are read below it, through an
	// os.Root, so a link cannot lead out of it.
	CredentialsDir string
	// Projects in file order.
	Projects []*Project
	hash     string
}

// Project is one entry: the projects it covers and what they may do.
type Project struct {
	// Name is an AppProject name or a glob (path.Match syntax: team-*).
	Name string
	// Line is where the entry starts in the file.
	Line int
	// Images are the normalized registries or repository prefixes bundle
	// images (named by the spec, or chosen by a catalog) may come from.
	Images []string
	// Catalogs are the catalog images the project may choose from, with
	// their packages.
	Catalogs []*Catalog
	// Directories allows directory bundles (spec.bundle: ./dir) from Git.
	Directories bool
	// RegistryConfig is the docker config.json of the project's
	// credentials, relative to the policy's CredentialsDir; "" with
	// SidecarCredentials false means none (anonymous pulls).
	RegistryConfig string
	// SidecarCredentials grants the sidecar's own --registry-config.
	SidecarCredentials bool
	// Trust is the project's own trust policy, checked after the
	// cluster's: an image must pass both (stricter, never looser). nil
	// without one.
	Trust *trust.Policy
	// TrustFile is the file Trust came from, as the policy names it.
	TrustFile string
	hash      string
}

// Catalog is one catalog entry of a project.
type Catalog struct {
	// Image is the normalized registry or repository prefix of the catalog
	// image.
	Image string
	// Packages are the package names the project may choose; AnyPackage
	// alone allows all.
	Packages []string
	Line     int
}

// Hash is a digest of everything in the policy that decides a verdict
// (the default, every entry, the trust policies' hashes, the credentials
// files' names): cache keys carry it, so an edited policy takes effect on the
// next render. "" for a nil policy.
func (p *Policy) Hash() string {
	if p == nil {
		return ""
	}
	return p.hash
}

// Files are the files the policy was read from: its own file and each
// entry's trust policy with the key and root files that names. A reloader
// watches them all: an edited trustPolicy file is a new policy. (Credentials
// files are read on every pull, not at load.)
func (p *Policy) Files() []string {
	if p == nil {
		return nil
	}
	files := []string{p.Name}
	for _, e := range p.Projects {
		for _, f := range e.Trust.Files() {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files
}

// Hash is the entry's own digest (its name included).
func (e *Project) Hash() string {
	if e == nil {
		return ""
	}
	return e.hash
}

// Describe names the entry in messages that reach Argo CD's UI: the file's
// base name, never its path on the server.
func (e *Project) Describe(policy string) string {
	return fmt.Sprintf("tenancy policy %s line %d (project %s)", filepath.Base(policy), e.Line, echo.Quote(e.Name))
}

// Match returns the entry covering project: the entry naming it exactly,
// else the first glob (in file order) matching it; nil when none does.
func (p *Policy) Match(project string) *Project {
	if p == nil {
		return nil
	}
	for _, e := range p.Projects {
		if e.Name == project {
			return e
		}
	}
	for _, e := range p.Projects {
		if isGlob(e.Name) {
			if ok, _ := path.Match(e.Name, project); ok {
				return e
			}
		}
	}
	return nil
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// MaxProjectName bounds a project name: an AppProject is a Kubernetes
// object, whose name is a DNS subdomain of at most 253 characters.
const MaxProjectName = validation.DNS1123SubdomainMaxLength

// CheckProjectName refuses a project name no AppProject can have (control
// characters, slashes, upper case, 10 KB of text): it came from the
// repo-server, and anything else means something is wrong upstream. The
// error does not repeat the name.
func CheckProjectName(project string) error {
	if errs := validation.IsDNS1123Subdomain(project); len(errs) > 0 || len(project) > MaxProjectName {
		return fmt.Errorf("is not an AppProject name (lower-case letters, digits, '-' and '.', at most %d characters)", MaxProjectName)
	}
	return nil
}

// ImageAllowed reports whether ref (an image reference) is under one of
// the entry's image prefixes.
func (e *Project) ImageAllowed(ref string) bool { return covered(e.Images, ref) }

// CatalogFor returns the entry's catalog covering ref, nil when none does.
func (e *Project) CatalogFor(ref string) *Catalog {
	repo := trust.NormalizeRepo(ref)
	var best *Catalog
	bestLen := -1
	for _, c := range e.Catalogs {
		if n, ok := trust.Covers(c.Image, repo); ok && n > bestLen {
			best, bestLen = c, n
		}
	}
	return best
}

// PackageAllowed reports whether the catalog entry lets its project choose
// pkg.
func (c *Catalog) PackageAllowed(pkg string) bool {
	return slices.Contains(c.Packages, AnyPackage) || slices.Contains(c.Packages, pkg)
}

func covered(prefixes []string, ref string) bool {
	repo := trust.NormalizeRepo(ref)
	for _, p := range prefixes {
		if _, ok := trust.Covers(p, repo); ok {
			return true
		}
	}
	return false
}

// computeHash digests the policy's verdict-deciding content in a fixed
// order; each entry's own hash is set on the way.
func computeHash(p *Policy) string {
	type hc struct {
		Image    string
		Packages []string
	}
	type he struct {
		Name, RegistryConfig, Trust string
		Images                      []string
		Catalogs                    []hc
		Directories, Sidecar        bool
	}
	all := []he{}
	for _, e := range p.Projects {
		h := he{Name: e.Name, RegistryConfig: e.RegistryConfig, Images: e.Images, Directories: e.Directories, Sidecar: e.SidecarCredentials}
		if e.Trust != nil {
			h.Trust = e.Trust.Hash()
		}
		for _, c := range e.Catalogs {
			h.Catalogs = append(h.Catalogs, hc{c.Image, c.Packages})
		}
		e.hash = sum(h)
		all = append(all, h)
	}
	return sum(struct {
		Unlisted    Default
		Credentials string
		Projects    []he
	}{p.Unlisted, p.CredentialsDir, all})
}

func sum(v any) string {
	raw, _ := json.Marshal(v)
	s := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(s[:])
}
