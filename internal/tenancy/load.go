package tenancy

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/safefile"
	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/yamlstrict"
)

// Bounds on a policy. It is the admin's file, but a file someone edits by
// hand, and every render reads it: a slip must not make one render cost
// seconds.
const (
	MaxPolicyBytes        = 1 << 20
	MaxProjects           = 256
	MaxImagesPerProject   = 64
	MaxCatalogsPerProject = 64
	MaxPackagesPerCatalog = 256
)

// Load reads the policy file at path. Trust policies it names are read
// relative to its directory; registry configs below CredentialsDir (the
// policy's directory when unset).
func Load(file string) (*Policy, error) {
	data, err := safefile.Read(file, MaxPolicyBytes, true)
	if err != nil {
		return nil, fmt.Errorf("tenancy policy %s: %s", filepath.Base(file), fileProblem(err, MaxPolicyBytes))
	}
	return Parse(data, file)
}

// fileProblem words a safefile error without the path (messages reach
// Argo CD's UI).
func fileProblem(err error, max int64) string {
	var notRegular *safefile.NotRegularError
	var tooLarge *safefile.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return "is " + safefile.Kind(notRegular.Mode) + ", not a regular file"
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("larger than %d bytes", max)
	case errors.Is(err, fs.ErrNotExist):
		return "file does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return "cannot be read"
}

// decoder reads the policy's nodes: yamlstrict's walk, and where files
// the policy names are found.
type decoder struct {
	yamlstrict.Decoder
	dir string
}

// constant checks a required field that has one allowed value.
func (d *decoder) constant(doc *yaml.Node, top map[string]*yaml.Node, field, want string) {
	v, ok := d.Str(top[field], field)
	switch {
	case !ok && top[field] == nil:
		d.Fail(doc, field, "is required: write %s: %s", field, want)
	case ok && v != want:
		d.Fail(top[field], field, "%s is not known: write %s", echo.Quote(v), want)
	}
}

// Parse reads a policy from data; file is where it came from (messages
// show its base name; relative files it names are found beside it).
func Parse(data []byte, file string) (*Policy, error) {
	name := filepath.Base(file)
	doc, err := yamlstrict.Document(data, "tenancy policy "+name, MaxPolicyBytes,
		fmt.Sprintf("write apiVersion: %s, kind: %s, unlistedProjects and projects (docs/tenancy.md)", APIVersion, Kind))
	if err != nil {
		return nil, err
	}
	d := &decoder{dir: filepath.Dir(file)}
	p := &Policy{Name: file}
	top := d.Fields(doc, "", "apiVersion", "kind", "unlistedProjects", "credentialsDir", "projects")
	d.constant(doc, top, "apiVersion", APIVersion)
	d.constant(doc, top, "kind", Kind)
	switch v, ok := d.Str(top["unlistedProjects"], "unlistedProjects"); {
	case !ok && top["unlistedProjects"] == nil:
		// No default: the admin says which, the safe one is not guessed
		// for them silently, nor today's.
		d.Fail(doc, "unlistedProjects", "is required: deny (projects no entry names render nothing) or allow (they render as without a tenancy policy)")
	case ok && (v == string(Deny) || v == string(Allow)):
		p.Unlisted = Default(v)
	case ok:
		d.Fail(top["unlistedProjects"], "unlistedProjects", "expected deny or allow, got %s", echo.Quote(v))
	}
	p.CredentialsDir = d.dir
	if v, ok := d.Str(top["credentialsDir"], "credentialsDir"); ok {
		if !filepath.IsAbs(v) {
			d.Fail(top["credentialsDir"], "credentialsDir", "%s is not an absolute path: give the directory the credentials Secret is mounted at", echo.Quote(v))
		}
		p.CredentialsDir = filepath.Clean(v)
	}
	items := d.List(top["projects"], "projects")
	if len(items) > MaxProjects {
		d.Fail(top["projects"], "projects", "%d entries, more than %d", len(items), MaxProjects)
		items = nil
	}
	p.Projects = yamlstrict.Unique(&d.Decoder, items, "projects", "name", "entry",
		func(n *yaml.Node, at string) *Project { return d.project(n, at, p.CredentialsDir) },
		func(e *Project) (string, int) { return e.Name, e.Line })
	if err := d.Err("tenancy policy " + name); err != nil {
		return nil, err
	}
	p.hash = computeHash(p)
	return p, nil
}

func (d *decoder) project(n *yaml.Node, at, credDir string) *Project {
	f := d.Fields(n, at, "name", "images", "catalogs", "directories", "registryConfig", "sidecarCredentials", "trustPolicy")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	before := len(d.Problems)
	e := &Project{Line: n.Line}
	if v, ok := d.Str(f["name"], at+".name"); ok {
		if err := checkNamePattern(v); err != nil {
			d.Fail(f["name"], at+".name", "%s", err)
		}
		e.Name = v
	} else if f["name"] == nil {
		d.Fail(n, at+".name", "is required: the AppProject name, or a glob such as team-*")
	}
	images := d.List(f["images"], at+".images")
	if len(images) > MaxImagesPerProject {
		d.Fail(f["images"], at+".images", "%d prefixes, more than %d", len(images), MaxImagesPerProject)
		images = nil
	}
	for i, in := range images {
		if v, ok := d.prefix(in, fmt.Sprintf("%s.images[%d]", at, i)); ok {
			e.Images = append(e.Images, v)
		}
	}
	cats := d.List(f["catalogs"], at+".catalogs")
	if len(cats) > MaxCatalogsPerProject {
		d.Fail(f["catalogs"], at+".catalogs", "%d catalogs, more than %d", len(cats), MaxCatalogsPerProject)
		cats = nil
	}
	for i, cn := range cats {
		if c := d.catalog(cn, fmt.Sprintf("%s.catalogs[%d]", at, i)); c != nil {
			e.Catalogs = append(e.Catalogs, c)
		}
	}
	e.Directories, _ = d.Bool(f["directories"], at+".directories")
	e.SidecarCredentials, _ = d.Bool(f["sidecarCredentials"], at+".sidecarCredentials")
	if v, ok := d.Str(f["registryConfig"], at+".registryConfig"); ok {
		switch {
		case e.SidecarCredentials:
			d.Fail(f["registryConfig"], at+".registryConfig", "set registryConfig or sidecarCredentials: true, not both")
		case !filepath.IsLocal(v):
			d.Fail(f["registryConfig"], at+".registryConfig", "%s is not a file name below credentialsDir: give the key of the credentials Secret (team-a.json)", echo.Quote(v))
		default:
			e.RegistryConfig = filepath.Clean(v)
			if _, err := ReadCredentials(credDir, e.RegistryConfig); err != nil && !errors.Is(err, fs.ErrNotExist) {
				d.Fail(f["registryConfig"], at+".registryConfig", "%s", err)
			}
		}
	}
	if v, ok := d.Str(f["trustPolicy"], at+".trustPolicy"); ok {
		if !filepath.IsLocal(v) {
			d.Fail(f["trustPolicy"], at+".trustPolicy", "%s is not a file name beside the tenancy policy: give the key of its ConfigMap", echo.Quote(v))
		} else if tp, err := trust.Load(filepath.Join(d.dir, v)); err != nil {
			d.Fail(f["trustPolicy"], at+".trustPolicy", "%s", echo.Short(err.Error()))
		} else {
			e.Trust, e.TrustFile = tp, v
		}
	}
	if len(e.Images) == 0 && len(e.Catalogs) == 0 && !e.Directories && len(d.Problems) == before {
		d.Fail(n, at, "grants nothing (no images, catalogs or directories): add what the project may render, or remove the entry (unlistedProjects decides for projects no entry names)")
	}
	if len(d.Problems) > before {
		return nil
	}
	return e
}

// checkNamePattern accepts an AppProject name, or a glob of one that names
// at least one character of its own: a pattern of wildcards only ("*",
// "?*") would cover every project, which unlistedProjects says already,
// and is the kind of grant written by accident. So would a pattern of
// classes and a star ("[a-z0-9]*"): a glob with a * must have a literal
// character outside its classes. That rule is sound: a name must contain
// that character to match, and the one-letter name "a" or "b" lacks it, so
// no accepted glob matches every AppProject name.
func checkNamePattern(v string) error {
	if !isGlob(v) {
		if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
			return fmt.Errorf("%s is not an AppProject name (lower-case letters, digits, '-' and '.') nor a glob such as team-*", echo.Quote(v))
		}
		return nil
	}
	if _, err := path.Match(v, ""); err != nil {
		return fmt.Errorf("%s is not a glob: %s", echo.Quote(v), echo.Short(err.Error()))
	}
	if strings.Contains(v, "[!") {
		// path.Match negates a class with ^; [!a] is the class of '!' and
		// 'a', not what a shell reader sees.
		return fmt.Errorf("%s: path.Match negates a class with ^, not !: write [^ instead of [!", echo.Quote(v))
	}
	if strings.Trim(v, "*?") == "" || strings.Contains(v, "*") && !hasLiteral(v) {
		return fmt.Errorf("%s covers every project: name the projects (team-a, team-*), and let unlistedProjects decide for the rest", echo.Quote(v))
	}
	if len(v) > MaxProjectName {
		return fmt.Errorf("%s is longer than %d characters", echo.Quote(v), MaxProjectName)
	}
	return nil
}

// hasLiteral reports whether the glob v (valid for path.Match) has a
// character outside its classes ([...]) that is no wildcard; an escaped
// one (\*) is literal.
func hasLiteral(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '*', '?':
		case '\\':
			return true
		case '[':
			// The class ends at the first ] that is not its first
			// character or escaped (path.Match's grammar).
			j := i + 1
			if j < len(v) && v[j] == '^' {
				j++
			}
			for ; j < len(v) && (v[j] != ']' || j == i+1); j++ {
				if v[j] == '\\' {
					j++
				}
			}
			i = j
		default:
			return true
		}
	}
	return false
}

// ipv6Host is prefix v without its bracketed IPv6 host ([::1]:5000/t is
// :5000/t): the brackets of an IPv6 registry are no wildcard, every other
// [ or ] is.
func ipv6Host(v string) string {
	if host, rest, ok := strings.Cut(strings.TrimPrefix(v, "["), "]"); ok && strings.HasPrefix(v, "[") && net.ParseIP(host) != nil && strings.Contains(host, ":") {
		return rest
	}
	return v
}

func (d *decoder) catalog(n *yaml.Node, at string) *Catalog {
	f := d.Fields(n, at, "image", "packages")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	c := &Catalog{Line: n.Line}
	if f["image"] == nil {
		d.Fail(n, at+".image", "is required: the catalog image's registry or repository prefix")
	} else if v, ok := d.prefix(f["image"], at+".image"); ok {
		c.Image = v
	}
	pkgs := d.List(f["packages"], at+".packages")
	switch {
	case f["packages"] == nil:
		d.Fail(n, at+".packages", "is required: the packages the project may choose, or [\"*\"] for all of this catalog's")
	case len(pkgs) == 0:
		d.Fail(f["packages"], at+".packages", "is empty: list the packages the project may choose, or remove the catalog")
	case len(pkgs) > MaxPackagesPerCatalog:
		d.Fail(f["packages"], at+".packages", "%d packages, more than %d: use [\"*\"] for all", len(pkgs), MaxPackagesPerCatalog)
		pkgs = nil
	}
	for i, pn := range pkgs {
		p := fmt.Sprintf("%s.packages[%d]", at, i)
		v, ok := d.Str(pn, p)
		if !ok {
			continue
		}
		if v != AnyPackage && len(validation.IsDNS1123Subdomain(v)) > 0 {
			d.Fail(pn, p, "%s is not a package name (lower-case letters, digits, '-' and '.'), nor \"*\"", echo.Quote(v))
			continue
		}
		c.Packages = append(c.Packages, v)
	}
	if len(c.Packages) > 1 && slices.Contains(c.Packages, AnyPackage) {
		d.Fail(f["packages"], at+".packages", "\"*\" allows every package: write it alone, or list the packages")
	}
	return c
}

// prefix reads an image prefix: a registry or a repository prefix, never
// "*" (a policy granting every registry by accident).
func (d *decoder) prefix(n *yaml.Node, at string) (string, bool) {
	v, ok := d.Str(n, at)
	if !ok {
		return "", false
	}
	if strings.Trim(strings.TrimSpace(v), "*/") == "" {
		d.Fail(n, at, "%s would grant every registry: name the registries (registry.example.com) or repository prefixes (quay.io/myorg) this project may use", echo.Quote(v))
		return "", false
	}
	norm, err := trust.NormalizePrefix(v)
	if err != nil || strings.ContainsAny(ipv6Host(v), "*?[]") {
		d.Fail(n, at, "%s is not a registry (registry.example.com) or repository prefix (quay.io/myorg): no tags, digests or wildcards", echo.Quote(v))
		return "", false
	}
	return norm, true
}
