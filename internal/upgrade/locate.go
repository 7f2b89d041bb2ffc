package upgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// Scan bounds: a GitOps repository holds a few hundred manifests; a tree
// far larger than these is not one (or the wrong directory was given).
var (
	maxScanFiles     = 20000
	maxScanFileBytes = int64(1 << 20)
)

// Slot is a value an Argo CD manifest passes to olm-cmp: the scalar node
// to edit, and the value it holds now.
type Slot struct {
	Node *yaml.Node
	// Where names it for messages: "parameter version", "element key digest".
	Where string
	// Template is the template an ApplicationSet wrote, when the value is
	// built from several parts (then Node is no node of the file).
	Template string
}

// Value is the slot's value, "" for a missing slot.
func (s *Slot) Value() string {
	if s == nil {
		return ""
	}
	return s.Node.Value
}

// App is one Argo CD Application (or one ApplicationSet list element) whose
// source path is an application directory, with the slots it passes to
// olm-cmp's version, digest and upgradeFrom (nil when it passes none).
type App struct {
	// File is the manifest, relative to the repository root.
	File string
	// What names the application: "Application cert-manager", "ApplicationSet
	// operators, element 2 (name: lws-operator)".
	What string
	// Line is where the application (or element) starts in File.
	Line                       int
	Version, Digest, UpgradeFr *Slot
	// RepoURL is the source's repoURL (templates put in); ByPath is set
	// (by Of) when it could not be compared with this repository's (no
	// remote known, or a repoURL upgrade cannot read): matched by path alone.
	RepoURL string
	ByPath  bool
	// Shared is the first YAML anchor or alias ("&base", "*v") in what
	// upgrade reads the slots from (the list element, the source's plugin
	// section): such slots are not upgrade's to edit (loadTarget).
	Shared string
	// Params and Env are every plugin parameter and env entry the
	// application passes (templates put in), for the spec the plugin
	// renders (overrides).
	Params []spec.Parameter
	Env    [][2]string
}

// String names the application and its place, for messages.
func (a *App) String() string { return fmt.Sprintf("%s (%s:%d)", a.What, a.File, a.Line) }

// Index is the Argo CD applications of a repository, by source path
// (slash-separated, relative to the repository root, cleaned).
type Index struct {
	Root string
	Apps map[string][]*App
	// unread are ApplicationSets whose generators upgrade does not read
	// (matrix, git, clusters, …) and whose template passes the plugin a
	// templated version, digest or upgradeFrom: a directory their path
	// pattern matches may get its version from them (Of refuses it).
	unread []unreadSet
	// dups are Applications and ApplicationSets with a key twice in one
	// mapping: Of refuses a directory their paths may name.
	dups []dupKeyDoc
	// data holds each manifest's bytes as parsed: the nodes point into them.
	data map[string][]byte
	// repos are this repository's URLs, normalised (NormalizeRepoURL): its
	// Git remotes and AddRepoURLs'. An application whose repoURL is another
	// repository does not render a directory here, whatever its path.
	repos []string
}

// AddRepoURLs adds URLs under which Argo CD reaches this repository (a
// mirror's, or the only ones when the checkout has no remote); one that
// cannot be read is an error.
func (ix *Index) AddRepoURLs(urls ...string) error {
	for _, u := range urls {
		n := NormalizeRepoURL(u)
		if n == "" {
			return fmt.Errorf("--repo-url %s: not a Git repository URL; give the URL Argo CD Applications name this repository by (https://host/org/repo or git@host:org/repo)", echo.Quote(u))
		}
		if !slices.Contains(ix.repos, n) {
			ix.repos = append(ix.repos, n)
		}
	}
	return nil
}

// RepoURLs are the repository URLs an application's repoURL is compared
// with, normalised.
func (ix *Index) RepoURLs() []string { return slices.Clone(ix.repos) }

// sameRepo reports whether a repoURL names this repository; known is
// false when that cannot be told (no URL of this repository, or a repoURL
// that is not one).
func (ix *Index) sameRepo(u string) (same, known bool) {
	n := NormalizeRepoURL(u)
	if n == "" || len(ix.repos) == 0 {
		return false, false
	}
	return slices.Contains(ix.repos, n), true
}

// RepoRoot is the Git work tree holding dir (the nearest parent with a .git
// entry), else dir itself: the applications that render dir are looked for
// there.
func RepoRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs, nil
		}
		d = parent
	}
}

// GitRepository is the top directory of the Git repository holding dir, as
// RepoRoot finds it, or "" when dir is in none (`olm-cmp init` warns of a
// bundle directory outside it: the plugin refuses one).
func GitRepository(dir string) string {
	root, err := RepoRoot(dir)
	if err != nil {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		return ""
	}
	return root
}

// skipDir are directories never scanned for Argo CD manifests or
// application directories (testdata: a repository's test fixtures).
func skipDir(name string) bool {
	return name != "." && strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || name == "testdata"
}

// Scan reads every *.yaml and *.yml file under root (hidden directories,
// node_modules, vendor and testdata aside) that mentions argoproj.io, and
// indexes the Applications and ApplicationSet list elements in them by
// source path; only, when given, are the files and directories (inside
// root) to read instead of all of root. A file that does not parse is
// skipped (it is not olm-cmp's to judge); a tree beyond the scan bounds is
// an error.
func Scan(ctx context.Context, root string, only ...string) (*Index, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	ix := &Index{Root: root, Apps: map[string][]*App{}, data: map[string][]byte{}}
	// A remote that is a local path (a CI runner's mirror, a clone of a
	// clone) is not a URL Argo CD reads the repository by: it says nothing
	// of which Applications are this repository's.
	for _, u := range Remotes(root) {
		if n := NormalizeRepoURL(u); n != "" && !strings.HasPrefix(n, "/") && !slices.Contains(ix.repos, n) {
			ix.repos = append(ix.repos, n)
		}
	}
	paths := []string{root}
	if len(only) > 0 {
		paths = nil
		for _, o := range only {
			abs, err := filepath.Abs(o)
			if err != nil {
				return nil, err
			}
			if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return nil, fmt.Errorf("%s is outside the repository %s: give Argo CD manifests of the repository (or its root with --repo-root)", o, root)
			}
			if _, err := os.Stat(abs); err != nil {
				return nil, fmt.Errorf("%s: no such file or directory", o)
			}
			paths = append(paths, abs)
		}
	}
	n := 0
	for _, top := range paths {
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return fmt.Errorf("%s: the search for Argo CD manifests was cut short: %w", root, context.Cause(ctx))
			}
			if err != nil {
				if p == top {
					return err
				}
				return nil // an unreadable corner of the tree holds no application of ours
			}
			if d.IsDir() {
				if p != top && skipDir(d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			if ext := path.Ext(d.Name()); ext != ".yaml" && ext != ".yml" || !d.Type().IsRegular() {
				return nil
			}
			if n++; n > maxScanFiles {
				return fmt.Errorf("%s holds over %d YAML files: give the repository's root (or a smaller checkout), or the Argo CD manifests with --apps-from, so the applications can be found", root, maxScanFiles)
			}
			info, err := d.Info()
			if err != nil || info.Size() > maxScanFileBytes {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil || !bytes.Contains(data, []byte("argoproj.io")) {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if _, seen := ix.data[filepath.ToSlash(rel)]; !seen {
				ix.add(filepath.ToSlash(rel), data)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ix, nil
}

func (ix *Index) add(file string, data []byte) {
	docs, err := yamlsafe.Parse(data)
	if err != nil {
		return
	}
	found := false
	for _, doc := range docs {
		if doc == nil || doc.Kind != yaml.MappingNode || !strings.HasPrefix(value(field(doc, "apiVersion")), "argoproj.io/") {
			continue
		}
		name := value(field(field(doc, "metadata"), "name"))
		kind := value(field(doc, "kind"))
		if kind == "Application" || kind == "ApplicationSet" {
			if key, then, first, dup := duplicateKey(doc, ""); dup {
				d := dupKeyDoc{what: kind + " " + name, file: file, line: doc.Line, key: key, first: first, then: then}
				d.paths, d.repoURLs = sourcePaths(doc)
				ix.dups = append(ix.dups, d)
				found = true // kept for replace, which rebuilds from ix.data
				continue
			}
		}
		switch kind {
		case "Application":
			for _, src := range sources(field(doc, "spec")) {
				a := &App{File: file, What: "Application " + name, Line: doc.Line}
				if p, ok := a.fromSource(src, nil); ok {
					ix.Apps[p] = append(ix.Apps[p], a)
					found = true
				}
			}
		case "ApplicationSet":
			found = ix.addSet(file, name, doc) || found
		}
	}
	if found {
		ix.data[file] = data
	}
}

// unreadSet is an ApplicationSet generator upgrade cannot read values from.
type unreadSet struct {
	what, file, kind string
	line             int
	repoURL          string         // the template's, as written
	path             *regexp.Regexp // the template's source path, {{…}} matching anything
}

// passesVersion reports whether a template's source passes the plugin a
// version, digest or upgradeFrom built by a template.
func passesVersion(src node) bool {
	plugin := field(src, "plugin")
	for _, prm := range items(field(plugin, "parameters")) {
		switch value(field(prm, "name")) {
		case "version", "digest", "upgradeFrom":
			if strings.Contains(value(field(prm, "string")), "{{") {
				return true
			}
		}
	}
	for _, env := range items(field(plugin, "env")) {
		if strings.Contains(value(field(env, "value")), "{{") && looseVersionName(value(field(env, "name"))) {
			return true
		}
	}
	return false
}

// looseVersionName reports whether a plugin env name means version, digest
// or upgradeFrom (any case, '_' and '-' ignored, as the plugin reads it).
func looseVersionName(n string) bool {
	n = strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(n))
	return n == "version" || n == "digest" || n == "upgradefrom"
}

// pathPattern matches the directories a templated source path may name.
func pathPattern(p string) *regexp.Regexp {
	parts := templateAny().Split(p, -1)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	re, err := regexp.Compile("^" + strings.Join(parts, ".+") + "$")
	if err != nil {
		return nil
	}
	return re
}

// addSet indexes the list generator elements of an ApplicationSet: each
// element's source path is the template's, with the element's keys put in.
func (ix *Index) addSet(file, name string, doc *yaml.Node) bool {
	spec := field(doc, "spec")
	tmpl := field(field(spec, "template"), "spec")
	found := false
	for gi, g := range items(field(spec, "generators")) {
		if field(g, "list") == nil {
			kind := "unknown"
			if gm := deref(g); gm != nil && gm.Kind == yaml.MappingNode && len(gm.Content) > 0 {
				kind = gm.Content[0].Value
			}
			for _, src := range sources(tmpl) {
				if re := pathPattern(value(field(src, "path"))); re != nil && passesVersion(src) {
					ix.unread = append(ix.unread, unreadSet{what: "ApplicationSet " + name, file: file, kind: kind, line: deref(g).Line, path: re, repoURL: value(field(src, "repoURL"))})
					found = true
				}
			}
		}
		for ei, el := range items(field(field(g, "list"), "elements")) {
			if el.Kind != yaml.MappingNode {
				continue
			}
			what := fmt.Sprintf("ApplicationSet %s, generator %d, element %d", name, gi+1, ei+1)
			if n := value(field(el, "name")); n != "" {
				what = fmt.Sprintf("ApplicationSet %s, element %s", name, n)
			}
			for _, src := range sources(tmpl) {
				a := &App{File: file, What: what, Line: el.Line}
				if p, ok := a.fromSource(src, el); ok {
					ix.Apps[p] = append(ix.Apps[p], a)
					found = true
				}
			}
		}
	}
	return found
}

// sources are an Application spec's source and sources[] entries.
func sources(spec node) []node {
	var out []node
	if s := field(spec, "source"); s != nil {
		out = append(out, s)
	}
	return append(out, items(field(spec, "sources"))...)
}

// fromSource fills a's slots from one source, an Application's or an
// ApplicationSet template's (el: the list element its templates read), and
// returns the source's path.
func (a *App) fromSource(src, el node) (string, bool) {
	if a.Shared = shared(el); a.Shared == "" {
		a.Shared = shared(field(src, "plugin"))
	}
	p, ok := expand(field(src, "path"), el)
	if !ok || p.Value == "" {
		return "", false
	}
	if r, ok := expand(field(src, "repoURL"), el); ok {
		a.RepoURL = r.Value
	} else {
		a.RepoURL = value(field(src, "repoURL")) // a template upgrade cannot fill: not comparable
	}
	plugin := field(src, "plugin")
	for _, prm := range items(field(plugin, "parameters")) {
		n := value(field(prm, "name"))
		if pv, ok := paramValue(prm, el); ok {
			a.Params = append(a.Params, pv)
		}
		s, ok := expand(field(prm, "string"), el)
		if !ok {
			continue
		}
		slot := &Slot{Node: s, Where: "parameter " + n}
		if tmpl := value(field(prm, "string")); el != nil && s != field(prm, "string") {
			if k := templateKey(tmpl); k != "" {
				slot.Where = "element key " + k
			} else {
				slot.Template = tmpl
			}
		}
		a.set(n, slot)
	}
	for _, env := range items(field(plugin, "env")) {
		n := value(field(env, "name"))
		s, ok := expand(field(env, "value"), el)
		if !ok {
			continue
		}
		a.Env = append(a.Env, [2]string{n, s.Value})
		slot := &Slot{Node: s, Where: "plugin env " + n}
		if tmpl := value(field(env, "value")); el != nil && s != field(env, "value") {
			if k := templateKey(tmpl); k != "" {
				slot.Where = "element key " + k
			} else {
				slot.Template = tmpl
			}
		}
		a.set(envField(n), slot)
	}
	return path.Clean(strings.TrimPrefix(p.Value, "./")), true
}

// paramValue reads one plugin parameter, its templates put in; false when
// it has no name or a template upgrade cannot put in.
func paramValue(prm, el node) (spec.Parameter, bool) {
	p := spec.Parameter{Name: value(field(prm, "name"))}
	if p.Name == "" {
		return p, false
	}
	if n := field(prm, "string"); n != nil {
		s, ok := expand(n, el)
		if !ok {
			return p, false
		}
		p.String = &s.Value
	}
	if n := field(prm, "array"); n != nil {
		arr := []string{}
		for _, it := range items(n) {
			s, ok := expand(it, el)
			if !ok {
				return p, false
			}
			arr = append(arr, s.Value)
		}
		p.Array = &arr
	}
	if n := field(prm, "map"); n != nil && n.Kind == yaml.MappingNode {
		m := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			s, ok := expand(n.Content[i+1], el)
			if !ok {
				return p, false
			}
			m[n.Content[i].Value] = s.Value
		}
		p.Map = &m
	}
	return p, true
}

// set records a slot for the spec field name (a parameter's name, or a
// plugin env name made into one); parameters come first and win, as in
// olm-cmp's own precedence.
func (a *App) set(name string, s *Slot) {
	var dst **Slot
	switch name {
	case "version":
		dst = &a.Version
	case "digest":
		dst = &a.Digest
	case "upgradeFrom":
		dst = &a.UpgradeFr
	default:
		return
	}
	if *dst == nil {
		*dst = s
	}
}

// envField is the spec field a plugin env name means (any case, _ and -
// ignored: docs/plugin.md), for the three fields upgrade writes.
func envField(n string) string {
	n = strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(strings.TrimPrefix(n, "ARGOCD_ENV_")))
	switch n {
	case "version", "digest":
		return n
	case "upgradefrom":
		return "upgradeFrom"
	}
	return ""
}

var templateRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\{\{-?\s*\.?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*-?\}\}$`)
})

// templateKey is the element key a whole-value template names ({{.version}},
// {{ .values.version }}, or fasttemplate's {{version}}), "" for another value.
func templateKey(v string) string {
	if m := templateRef().FindStringSubmatch(strings.TrimSpace(v)); m != nil {
		return m[1]
	}
	return ""
}

var templateAny = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{[^}]*\}\}`) })

// expand resolves a template value against a list element: a value that is
// a whole {{.key}} becomes the element's node for that key (the place to
// edit); a path with {{.key}} parts gets them put in (a node of its own,
// read only); a value without templates is itself. ok is false when a
// template names something the element does not have, or uses more than
// keys (functions, pipelines): upgrade does not guess.
func expand(n node, el node) (*yaml.Node, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return nil, false
	}
	if el == nil || !strings.Contains(n.Value, "{{") {
		return n, true
	}
	if k := templateKey(n.Value); k != "" {
		v := lookup(el, k)
		return v, v != nil && v.Kind == yaml.ScalarNode
	}
	ok := true
	out := templateAny().ReplaceAllStringFunc(n.Value, func(t string) string {
		v := lookup(el, templateKey(t))
		if v == nil || v.Kind != yaml.ScalarNode {
			ok = false
			return ""
		}
		return v.Value
	})
	if !ok {
		return nil, false
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: out}, true
}

// lookup follows a dotted key (values.version) into a mapping.
func lookup(n node, key string) node {
	if key == "" {
		return nil
	}
	for _, k := range strings.Split(key, ".") {
		if n = field(n, k); n == nil {
			return nil
		}
	}
	return n
}

// node is a parsed YAML node; nil is a missing one, and the helpers
// below take nil.
type node = *yaml.Node

// field is a mapping's value for key as Argo CD reads it: aliases
// followed, merge keys (<<: *base) consulted when the mapping lacks key.
func field(n node, key string) node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i].Tag != "!!merge" {
			return deref(n.Content[i+1])
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" {
			continue
		}
		m := deref(n.Content[i+1])
		bases := []node{m}
		if m != nil && m.Kind == yaml.SequenceNode {
			bases = m.Content
		}
		for _, b := range bases {
			if v := field(b, key); v != nil {
				return v
			}
		}
	}
	return nil
}

// deref is the node an alias stands for (yamlsafe refused cycles).
func deref(n node) node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// shared names the first YAML anchor or alias in n ("&base", "*v"), ""
// for none: a value there is written once and read in several places, so
// an edit would change them all (or, through an alias, not the place
// meant).
func shared(n node) string {
	if n == nil {
		return ""
	}
	switch {
	case n.Kind == yaml.AliasNode:
		return "*" + n.Value
	case n.Anchor != "":
		return "&" + n.Anchor
	}
	for _, c := range n.Content {
		if s := shared(c); s != "" {
			return s
		}
	}
	return ""
}

// items are a sequence's entries; nil for anything else.
func items(n node) []node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func value(n node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// Of returns the applications whose source is dir (relative to the
// index's root) of this repository; elsewhere are those whose path is dir
// but whose repoURL is another repository (they render a directory of
// that one). An application whose repoURL cannot be compared is matched by
// path alone (ByPath), as before repository URLs were read.
func (ix *Index) Of(dir string) (apps, elsewhere []*App, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	rel, err := filepath.Rel(ix.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, nil, nil
	}
	rel = path.Clean(filepath.ToSlash(rel))
	for _, d := range ix.dups {
		if d.otherRepo(ix) {
			continue
		}
		for _, re := range d.paths {
			if re.MatchString(rel) {
				return nil, nil, d.error(rel)
			}
		}
	}
	for _, u := range ix.unread {
		if same, known := ix.sameRepo(u.repoURL); known && !same {
			continue
		}
		if u.path.MatchString(rel) {
			return nil, nil, fmt.Errorf("%s (%s:%d) may render %s with a version, digest or upgradeFrom from its %s generator, which upgrade does not read (it reads list generators): bump it by hand, or name the manifests that render %s with --apps-from", u.what, u.file, u.line, rel, echo.Quote(u.kind), rel)
		}
	}
	for _, a := range ix.Apps[rel] {
		same, known := ix.sameRepo(a.RepoURL)
		switch {
		case !known:
			a.ByPath = true
			apps = append(apps, a)
		case same:
			a.ByPath = false
			apps = append(apps, a)
		default:
			elsewhere = append(elsewhere, a)
		}
	}
	return apps, elsewhere, nil
}

// File is the bytes of a scanned manifest, as its nodes were parsed from.
func (ix *Index) File(name string) ([]byte, error) {
	if d, ok := ix.data[name]; ok {
		return d, nil
	}
	return nil, errors.New(name + ": not a scanned manifest")
}

// clone is ix with the same manifests, for replace.
func (ix *Index) clone() *Index {
	return &Index{Root: ix.Root, Apps: map[string][]*App{}, data: maps.Clone(ix.data), repos: ix.repos}
}

// replace sets a manifest's bytes and indexes every manifest again (a
// clone's: the edited files are read back before they are written).
func (ix *Index) replace(file string, data []byte) {
	all := ix.data
	all[file] = data
	ix.Apps, ix.data, ix.unread, ix.dups = map[string][]*App{}, map[string][]byte{}, nil, nil
	for _, f := range slices.Sorted(maps.Keys(all)) {
		ix.add(f, all[f])
	}
}

// maxApps bounds the application directories one argument may expand to.
const maxApps = 1000

// Dirs expands the command's arguments into application directories: a
// directory holding olm-cmp.yaml is one; another directory stands for every
// directory below it that holds one (hidden ones, node_modules and vendor
// aside), in lexical order, so `olm-cmp upgrade` at a repository's root
// covers all its applications.
func Dirs(ctx context.Context, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if _, err := os.Stat(filepath.Join(a, "olm-cmp.yaml")); err == nil {
			out = append(out, a)
			continue
		}
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%s: no such directory", a)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s is a file, not a directory: give application directories (each holding olm-cmp.yaml) or a directory above them", a)
		}
		n := 0
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return fmt.Errorf("%s: the search for olm-cmp.yaml files was cut short: %w", a, context.Cause(ctx))
			}
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if p != a && skipDir(d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Name() == "olm-cmp.yaml" {
				if n++; n > maxApps {
					return fmt.Errorf("%s holds over %d application directories: give fewer at a time", a, maxApps)
				}
				out = append(out, filepath.Dir(p))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no olm-cmp.yaml in it or below it", a)
		}
	}
	// One directory named twice (a/b and a, or a and ./a) is upgraded once:
	// twice would write two hops in one run, and call itself a second copy.
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(d string) bool {
		k := filepath.Clean(d)
		if abs, err := filepath.Abs(d); err == nil {
			k = abs
		}
		dup := seen[k]
		seen[k] = true
		return dup
	}), nil
}
