package render

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// ownAnnotationPrefix marks the annotations olm-cmp writes on every object
// it renders (AnnotationBundle and the others).
const ownAnnotationPrefix = "olm-cmp.dev/"

// readExtraManifests reads the extra manifests spec.extraManifests selects
// among ExtraManifestFiles, in file-name order, and records the file each
// object came from (for checkUnique). A file that is olm-cmp's own output
// (`render . > out.yaml` beside the spec) is refused: rendered again, its
// objects would repeat the bundle's.
func (p *pipeline) readExtraManifests() ([]*yaml.RNode, error) {
	dir := p.req.SourceDir
	if dir == "" {
		if p.req.Spec.ExtraManifests != nil {
			p.noMatch("spec.extraManifests selects nothing: there is no source directory (no " + spec.FileName + ") to read extra manifests from; remove it")
		}
		return nil, nil
	}
	all, err := ExtraManifestFiles(dir)
	if err != nil {
		return nil, err
	}
	names := p.selectExtraManifests(all)
	var out []*yaml.RNode
	for _, file := range names {
		// Messages name the file escaped: a line break in a file name
		// would end the error line CI prints and forge the next.
		n := echo.Text(file)
		nodes, err := readManifestFile(filepath.Join(dir, file))
		if errors.Is(err, errNotRegular) {
			return nil, fmt.Errorf("extra manifest %s: %v: olm-cmp reads extra manifests from regular files only (it never opens anything else): put the file itself beside %s, or leave it out with spec.extraManifests: {exclude: [%s]}", n, err, spec.FileName, n)
		}
		if errors.Is(err, errNotObject) {
			return nil, fmt.Errorf("extra manifest %s: %v: if it is not meant as a manifest (another tool's file), leave it out with spec.extraManifests: {exclude: [%s]}", n, err, n)
		}
		if err != nil {
			return nil, fmt.Errorf("extra manifest %s: %w", n, err)
		}
		for _, o := range nodes {
			if key, ok := ownAnnotation(o); ok {
				return nil, fmt.Errorf("extra manifest %s holds olm-cmp's own output (%s/%s carries the annotation %s): move the file out of the directory of %s (render --output-dir writes elsewhere), or leave it out with spec.extraManifests: {exclude: [%s]}, or list the extra manifests you want with spec.extraManifests: {include: [...]}",
					n, o.GetKind(), o.GetName(), key, spec.FileName, n)
			}
			if o.GetKind() == spec.Kind && strings.HasPrefix(o.GetApiVersion(), "olm-cmp.dev/") {
				return nil, fmt.Errorf("extra manifest %s holds an olm-cmp spec (%s %s), not an object for the cluster: olm-cmp renders %s only; move the file to a directory of its own (an application of its own), or leave it out with spec.extraManifests: {exclude: [%s]}",
					n, spec.Kind, echo.Quote(o.GetName()), spec.FileName, n)
			}
			p.recordExtra(o, n)
			if why, tool := otherToolObject(o); tool == argoCD {
				p.warn(fmt.Sprintf("extra manifest %s holds %s (%s): the Application rendering this directory will create it; if it is this operator's own Application, leave the file out with spec.extraManifests: {exclude: [%s]}",
					n, why, echo.Text(o.GetName()), n))
			}
		}
		out = append(out, nodes...)
	}
	return out, nil
}

// selectExtraManifests applies spec.extraManifests to all, the candidate
// files: include globs (when any) keep the files they match, exclude globs
// then drop theirs. A glob that matches no candidate is reported as an
// entry that matches nothing (a warning, an error under strict).
func (p *pipeline) selectExtraManifests(all []string) []string {
	em := p.req.Spec.ExtraManifests
	if em == nil {
		return all
	}
	matches := func(globs []string, name string) bool {
		return slices.ContainsFunc(globs, func(g string) bool {
			ok, _ := path.Match(g, name) // spec validation rejected bad globs
			return ok
		})
	}
	unmatched := func(field string, globs []string) {
		for _, g := range globs {
			if !slices.ContainsFunc(all, func(n string) bool { return matches([]string{g}, n) }) {
				p.noMatch(fmt.Sprintf("spec.extraManifests.%s %s matches no *.yaml, *.yml or *.json file beside %s (%s): correct or remove it",
					field, echo.Quote(g), spec.FileName, candidates(all)))
			}
		}
	}
	unmatched("include", em.Include)
	unmatched("exclude", em.Exclude)
	var out []string
	for _, n := range all {
		if (len(em.Include) == 0 || matches(em.Include, n)) && !matches(em.Exclude, n) {
			out = append(out, n)
		}
	}
	return out
}

// candidates lists the candidate files for a message, the first few.
func candidates(all []string) string {
	if len(all) == 0 {
		return "there are none"
	}
	return "there are " + fewNames(all)
}

// fewNames joins the first few of names (escaped) for a message, and says
// how many it left out.
func fewNames(names []string) string {
	const shown = 8
	if len(names) > shown {
		return fmt.Sprintf("%s, and %d more", echo.Text(strings.Join(names[:shown], ", ")), len(names)-shown)
	}
	return echo.Text(strings.Join(names, ", "))
}

// ownAnnotation returns an annotation olm-cmp writes, if n carries one.
func ownAnnotation(n *yaml.RNode) (string, bool) {
	keys := make([]string, 0, 4)
	for k := range n.GetAnnotations() {
		if strings.HasPrefix(k, ownAnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	slices.Sort(keys)
	return keys[0], true
}

// recordExtra notes that o came from the extra manifest file, under its
// identity as read and without namespace (the render fills a missing one).
func (p *pipeline) recordExtra(o *yaml.RNode, file string) {
	if p.extraFiles == nil {
		p.extraFiles = map[string][]string{}
	}
	k := sameObject(o)
	p.extraFiles[k] = append(p.extraFiles[k], file)
}

// sameObject identifies an object for checkUnique's message: group, kind
// and name (an extra manifest's namespace may be filled in later).
func sameObject(n *yaml.RNode) string {
	id := bundle.ObjectID(n)
	kind, _, _ := strings.Cut(id, " ")
	return kind + " " + n.GetName()
}

// OtherToolFile is a file beside olm-cmp.yaml that the render would read as
// an extra manifest but that belongs to another tool (Why says which, in a
// few words): `olm-cmp init` leaves such files out of the spec it writes.
type OtherToolFile struct{ File, Why string }

// otherToolNames are the files other tools keep in a directory, by name
// (lower case): a few read as Kubernetes objects (skaffold.yaml,
// catalog-info.yaml), the rest are not objects at all.
var otherToolNames = map[string]string{
	"kustomization.yaml": "a kustomization", "kustomization.yml": "a kustomization",
	"chart.yaml":    "a Helm chart's Chart.yaml",
	"helmfile.yaml": "a helmfile", "helmfile.yml": "a helmfile",
	"skaffold.yaml": "a Skaffold config", "skaffold.yml": "a Skaffold config",
	"catalog-info.yaml": "a Backstage catalog entry", "devfile.yaml": "a devfile",
	"docker-compose.yaml": "a Compose file", "docker-compose.yml": "a Compose file", "compose.yaml": "a Compose file", "compose.yml": "a Compose file",
	"renovate.json": "a Renovate config", "package.json": "an npm package file", "tsconfig.json": "a TypeScript config",
	"mkdocs.yml": "an MkDocs config", "codecov.yml": "a Codecov config",
}

// argoCD is Argo CD's API group: its objects beside the spec are warned
// about in a render (the operator's Application would create them).
const argoCD = "argoproj.io"

// otherToolKinds are the apiVersion groups (the part before "/") and kinds
// of objects meant for another tool, not the cluster: an Argo CD
// Application beside olm-cmp.yaml would be deployed by the operator's own
// Application (usually the one that names this directory).
var otherToolKinds = []struct{ group, kind, why string }{
	{argoCD, "Application", "an Argo CD Application"},
	{argoCD, "ApplicationSet", "an Argo CD ApplicationSet"},
	{argoCD, "AppProject", "an Argo CD AppProject"},
	{"kustomize.config.k8s.io", "", "a kustomization"},
	{"config.kubernetes.io", "", "a kustomize function config"},
	{"backstage.io", "", "a Backstage catalog entry"},
	{"olm-cmp.dev", spec.Kind, "an olm-cmp spec"}, // render refuses it: one spec per directory
}

// OtherToolFiles lists the extra-manifest candidates of dir (as
// ExtraManifestFiles names them) that are another tool's: by name (a hidden
// file, kustomization.yaml, Chart.yaml, helmfile.yaml…), by content (an Argo
// CD Application, ApplicationSet or AppProject, a kustomization, YAML that
// is no Kubernetes object: a values file). A file that does not read or
// parse is not listed: the render names its problem.
func OtherToolFiles(dir string) ([]OtherToolFile, error) {
	names, err := ExtraManifestFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []OtherToolFile
	for _, n := range names {
		if why := otherToolWhy(dir, n); why != "" {
			out = append(out, OtherToolFile{File: n, Why: why})
		}
	}
	return out, nil
}

func otherToolWhy(dir, name string) string {
	if strings.HasPrefix(name, ".") {
		return "a hidden file"
	}
	if why, ok := otherToolNames[strings.ToLower(name)]; ok {
		return why
	}
	nodes, err := readManifestFile(filepath.Join(dir, name))
	if errors.Is(err, errNotObject) {
		return "no Kubernetes object: " + strings.TrimSpace(err.Error())
	}
	if err != nil {
		return ""
	}
	for _, o := range nodes {
		if why, _ := otherToolObject(o); why != "" {
			return why
		}
	}
	return ""
}

// otherToolObject says which other tool's object o is ("" for none), and
// the API group that told (argoCD for Argo CD's objects).
func otherToolObject(o *yaml.RNode) (why, group string) {
	group, _, _ = strings.Cut(o.GetApiVersion(), "/")
	for _, k := range otherToolKinds {
		if group == k.group && (k.kind == "" || o.GetKind() == k.kind) {
			return k.why, k.group
		}
	}
	return "", ""
}
