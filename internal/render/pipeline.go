package render

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/editdist"
	"github.com/olm-cmp/olm-cmp/internal/safefile"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/transform"
	"github.com/olm-cmp/olm-cmp/internal/validate"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// Annotations every rendered object carries, so `kubectl get -o yaml` tells
// which bundle and version an object came from.
const (
	AnnotationBundle  = "olm-cmp.dev/bundle"  // <csv name>, e.g. lws-operator.v1.0.0
	AnnotationPackage = "olm-cmp.dev/package" // <package>@<version>
	AnnotationSource  = "olm-cmp.dev/source"  // image@digest, or the directory as the spec names it
	AnnotationDigest  = "olm-cmp.dev/digest"  // the image's manifest digest, or a directory's content digest (bundle.DirDigest)
)

// maxExtraManifestBytes caps one extra manifest file; they are hand-written
// CRs, so anything bigger is a mistake (or an attempt to exhaust memory).
const maxExtraManifestBytes = 8 << 20

type pipeline struct {
	req      Request
	b        *bundle.Bundle
	warnings []string
	// unmatched are the spec entries that matched nothing (transform's
	// Options.Unmatched): warnings, or under strict errors.
	unmatched []string
	manifests []string // set by the serialize step
	// extraFiles names the extra manifest files each object came from
	// (keyed by sameObject), for checkUnique's error.
	extraFiles map[string][]string
	// examples are the objects spec.examples added (keyed by sameObject),
	// for checkUnique's error.
	exampleObjs map[string]bool
	// bundleFiles names the manifests/ files each object the bundle ships
	// as written came from (keyed by sameObject), for validate's lines
	// (origin.go); built on first use.
	bundleFiles map[string][]string
	// signatures are the trust policy's verdicts (Resolved.Signatures).
	signatures []Signature
	// ownsBundle hands b's CRDs to the render: converted in place, not
	// copied (convert.Options.OwnsBundle).
	ownsBundle bool
	// ownedCRDFiles are the files of manifests/ holding a CRD the CSV
	// owns, noted before the render can change the bundle's CRDs (a patch
	// may rename one in place under ownsBundle): see skippable.
	ownedCRDFiles map[string]bool
}

func newPipeline(req Request, b *bundle.Bundle) (*pipeline, error) {
	if b == nil || b.CSV == nil {
		return nil, fmt.Errorf("bundle has no ClusterServiceVersion")
	}
	// What the load accepted but the user should hear about comes first.
	return &pipeline{req: req, b: b, warnings: slices.Clone(b.Warnings), ownedCRDFiles: ownedCRDFiles(b)}, nil
}

func (p *pipeline) warn(msg string) { p.warnings = append(p.warnings, msg) }

func (p *pipeline) noMatch(msg string) { p.unmatched = append(p.unmatched, msg) }

// step is one entry of the pipeline: it takes the objects so far and
// returns the next ones. The order is data (kyaml's "order is data"): the
// list below is the whole render, and docs/spec.md lists it under
// "Pipeline", in the same order (a test compares them).
type step struct {
	name string
	run  func(objs []*yaml.RNode) ([]*yaml.RNode, error)
}

// steps is the render, from conversion to serialization. Examples and extra
// manifests join the bundle's objects before transform's steps, so every
// spec field (images, pull secrets, exclude, patches) reaches them too.
// checkingStage is the validate step as a deadline's message names it.
const checkingStage = "checking the objects as the API server would (CRDs, custom resources and their CEL rules, in olm-cmp-check; its verdicts are kept as they come, so a retry goes on where this one stopped)"

func (p *pipeline) steps(ctx context.Context) []step {
	steps := []step{
		{"convert", p.convert},
		{"examples", p.examples},
		{"extra manifests", p.extraManifests},
	}
	for _, f := range transform.Steps(p.transformOptions()) {
		steps = append(steps, step{f.Name, f.Filter.Filter})
	}
	return append(steps,
		step{"validate", func(objs []*yaml.RNode) ([]*yaml.RNode, error) {
			// A deadline that stops this step names it: a cold check of CRDs
			// with many CEL rules, or custom resources whose rules run the
			// server's whole budget, can outlast Argo CD's 60 s alone.
			defer enterStage(ctx, checkingStage)()
			return validate.Objects(ctx, p.originOf).Filter(objs)
		}},
		step{"unique", func(objs []*yaml.RNode) ([]*yaml.RNode, error) { return objs, p.checkUnique(objs) }},
		step{"serialize", p.serialize},
	)
}

// run runs every step, checking ctx between them so a request whose caller
// has gone stops at the next step. Everything is built in memory: an error
// anywhere returns no output at all.
func (p *pipeline) run(ctx context.Context) ([]*yaml.RNode, []string, error) {
	return p.runSteps(ctx, p.steps(ctx))
}

func (p *pipeline) runSteps(ctx context.Context, steps []step) ([]*yaml.RNode, []string, error) {
	var objs []*yaml.RNode
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("render stopped before step %s: %w", echo.Quote(s.name), context.Cause(ctx))
		}
		var err error
		if objs, err = s.run(objs); err != nil {
			return nil, nil, err
		}
	}
	return objs, p.manifests, nil
}

// convert is OLM's conversion of the bundle (internal/convert).
func (p *pipeline) convert(_ []*yaml.RNode) ([]*yaml.RNode, error) {
	s := p.req.Spec
	objs, err := convert.Convert(p.b, convert.Options{
		InstallNamespace: s.Namespace,
		TargetNamespaces: s.WatchNamespaces,
		CertProvider:     certProvider(s, p.b),
		DeploymentConfig: s.Config,
		OwnsBundle:       p.ownsBundle,
	})
	if te := (*convert.TargetNamespacesError)(nil); errors.As(err, &te) {
		// Led by the field, so that the file's line can be named.
		return nil, fmt.Errorf("spec.watchNamespaces: bundle %s: %w", p.b.CSV.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", p.b.CSV.Name, err)
	}
	if s.Config != nil && s.Config.Selector != nil {
		// OLM ignores it too; a user who set it meant to pick Deployments.
		p.noMatch("config.selector selects nothing: OLM applies config to every Deployment of the bundle; remove it, and change a single Deployment with a patch instead")
	}
	return objs, nil
}

// examples adds the CSV's alm-examples the spec asks for, marked as custom
// resources (the last wave).
func (p *pipeline) examples(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	s := p.req.Spec
	if len(s.Examples) == 0 {
		return objs, nil
	}
	crds := make([]*yaml.RNode, len(p.b.CRDs))
	for i, c := range p.b.CRDs {
		crds[i] = c.RNode
	}
	ex, err := transform.Examples(p.b.CSV.Annotations["alm-examples"], s.Examples, s.Namespace, crds, p.warn)
	if err != nil {
		return nil, fmt.Errorf("spec.examples: %w", err)
	}
	if ex, err = transform.MarkCR().Filter(ex); err != nil {
		return nil, err
	}
	p.exampleObjs = make(map[string]bool, len(ex))
	for _, e := range ex {
		p.exampleObjs[sameObject(e)] = true
	}
	return append(objs, ex...), nil
}

// extraManifests adds the files beside olm-cmp.yaml that
// spec.extraManifests selects (extramanifests.go), marked as custom resources.
func (p *pipeline) extraManifests(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	extra, err := p.readExtraManifests()
	if err != nil {
		return nil, err
	}
	if extra, err = transform.MarkCR().Filter(extra); err != nil {
		return nil, err
	}
	return append(objs, extra...), nil
}

// serialize prints every object (transform.Serialize); the objects pass on
// unchanged, for the JSON form.
func (p *pipeline) serialize(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	var err error
	p.manifests, err = transform.Serialize(objs)
	return objs, err
}

func (p *pipeline) transformOptions() transform.Options {
	s := p.req.Spec
	// objects olm-cmp adds are named after the spec (metadata.name), else the package
	base := p.b.Package
	if p.req.Name != "" {
		base = p.req.Name
	}
	authReader := ""
	if s.AuthReaderBinding {
		authReader = base
	}
	return transform.Options{
		Namespace:            s.Namespace,
		SuggestedNamespace:   p.b.CSV.Annotations["operatorframework.io/suggested-namespace"],
		CreateNamespace:      s.CreatesNamespace(),
		NamespaceLabels:      s.NamespaceLabels,
		NamespaceAnnotations: s.NamespaceAnnotations,
		Exclude:              s.Exclude,
		ServiceAccounts:      s.ServiceAccounts,
		ImagePullSecrets:     s.ImagePullSecrets,
		AuthReaderBinding:    authReader,
		Images:               s.Images,
		Patches:              s.Patches,
		ReadFile:             p.readPatchFile,
		APIVersions:          p.req.APIVersions,
		Annotations:          p.annotations(),
		Waves:                s.SyncWaves.Effective(),
		KeepCRDs:             s.KeepsCRDs(),
		SettleHook:           base + "-sync-settled",
		Warn:                 p.warn,
		Unmatched:            p.noMatch,
	}
}

func (p *pipeline) annotations() map[string]string {
	src := p.b.Origin.Image
	if src == "" {
		src = p.b.Origin.Ref
	}
	a := map[string]string{
		AnnotationBundle:  p.b.CSV.Name,
		AnnotationPackage: p.b.Package + "@" + p.b.CSV.Spec.Version.String(),
		AnnotationSource:  src,
		AnnotationDigest:  p.b.Origin.Digest,
	}
	if sig, ok := bundleSignature(p.signatures); ok {
		a[AnnotationSignature] = sig
	}
	return a
}

// readPatchFile reads a patch's path relative to the source directory and
// refuses paths that leave it (a repository must not read the server's files).
func (p *pipeline) readPatchFile(path string) ([]byte, error) {
	if p.req.SourceDir == "" {
		return nil, errors.New("no source directory to read it from")
	}
	if filepath.IsAbs(path) || !filepath.IsLocal(path) {
		return nil, fmt.Errorf("must be relative and inside the directory of %s", spec.FileName)
	}
	root, err := os.OpenRoot(p.req.SourceDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// Only a regular file of a manifest's size: a FIFO would block the
	// render, a huge file exhaust memory.
	fi, err := root.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil, fmt.Errorf("no such file in the directory of %s%s", spec.FileName, nearFiles(root, path))
	case err != nil:
		// A symbolic link that leaves the directory: refused without
		// following it, whether its target exists or not.
		return nil, fmt.Errorf("must be relative and inside the directory of %s (it is a symbolic link that leaves it)", spec.FileName)
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > maxExtraManifestBytes {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit", fi.Size(), maxExtraManifestBytes)
	}
	data, err := root.ReadFile(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	return data, nil
}

// nearFiles names the files of the patch's directory whose names are
// closest to the missing path's, as "; files there: a.yaml, b.yaml", or ""
// when there are none. At most a few are read and named.
func nearFiles(root *os.Root, path string) string {
	dir, base := filepath.Split(path)
	f, err := root.Open(cmp.Or(filepath.Clean(dir), "."))
	if err != nil {
		return ""
	}
	defer f.Close()
	entries, _ := f.ReadDir(256)
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && e.Name() != base && e.Name() != spec.FileName {
			names = append(names, echo.Short(filepath.Join(dir, e.Name())))
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(editdist.Distance(a, path), editdist.Distance(b, path)), strings.Compare(a, b))
	})
	if len(names) > 5 {
		names = names[:5]
	}
	return "; files there: " + strings.Join(names, ", ")
}

// ExtraManifestFiles names the extra manifests of a source directory: every
// *.yaml|*.yml|*.json entry at its top level other than olm-cmp.yaml and
// directories, in name order. Caches that key renders on their inputs use
// the same list. It names what is not a regular file too (a symbolic link,
// a FIFO, a device): the render refuses such a file, unless spec.extraManifests
// leaves it out (readManifestFile), rather than pass over it without a word.
func ExtraManifestFiles(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if n == spec.FileName || e.IsDir() {
			continue
		}
		switch strings.ToLower(filepath.Ext(n)) {
		case ".yaml", ".yml", ".json":
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// errNotRegular marks an extra manifest that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// readRegularFile reads path, up to maxExtraManifestBytes, when it is a
// regular file (not a link), without opening anything else
// (safefile.Read): a FIFO or a link to /dev/zero beside the spec must not
// hang a render.
func readRegularFile(path string) ([]byte, error) {
	data, err := safefile.Read(path, maxExtraManifestBytes, false)
	var notRegular *safefile.NotRegularError
	var tooLarge *safefile.TooLargeError
	switch {
	case errors.As(err, &notRegular) && notRegular.Changed:
		return nil, fmt.Errorf("changed while it was read, %w", errNotRegular)
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%s, %w", safefile.Kind(notRegular.Mode), errNotRegular)
	case errors.As(err, &tooLarge) && tooLarge.Grew:
		return nil, fmt.Errorf("grew past the %d-byte limit for extra manifests while it was read", maxExtraManifestBytes)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%d bytes: larger than the %d-byte limit for extra manifests", tooLarge.Size, maxExtraManifestBytes)
	}
	return data, err
}

// errNotObject marks a file whose YAML is no Kubernetes object (a values
// file, a kustomization.yaml): its text adds nothing, the caller says what
// to do with the file.
var errNotObject = errors.New("")

func readManifestFile(path string) ([]*yaml.RNode, error) {
	data, err := readRegularFile(path)
	if err != nil {
		return nil, err
	}
	// Bounded first: an alias cycle or bomb here would otherwise reach
	// code that follows aliases without end (see yamlsafe).
	if _, err := yamlsafe.Parse(data); err != nil {
		return nil, err
	}
	nodes, err := (&kio.ByteReader{
		Reader:                bytesReader(data),
		OmitReaderAnnotations: true,
	}).Read()
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	for i, n := range nodes {
		if n.GetApiVersion() == "" || n.GetKind() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion or kind%w", i+1, errNotObject)
		}
		if n.GetName() == "" {
			return nil, fmt.Errorf("document %d (%s) has no metadata.name%w", i+1, n.GetKind(), errNotObject)
		}
	}
	return nodes, nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// checkUnique refuses a render holding one object twice (an extra manifest
// repeating a bundle object or an example): Argo CD would apply one of the two
// at random and report the other as a duplicate. The error names the file an
// extra manifest's copy came from, and the fix that fits where the copies are.
func (p *pipeline) checkUnique(nodes []*yaml.RNode) error {
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		id := bundle.ObjectID(n)
		if !seen[id] {
			seen[id] = true
			continue
		}
		files := p.extraFiles[sameObject(n)]
		distinct := slices.Compact(slices.Sorted(slices.Values(files)))
		switch {
		case len(files) > 1 && len(distinct) == 1:
			return fmt.Errorf("%s is rendered twice: the extra manifest %s holds it twice: remove one copy", id, files[0])
		case len(files) > 1:
			return fmt.Errorf("%s is rendered twice: the extra manifests %s hold it: remove it from all but one", id, strings.Join(distinct, " and "))
		case len(files) == 1:
			from := "the bundle"
			if p.exampleObjs[sameObject(n)] {
				from = "spec.examples"
			}
			return fmt.Errorf("%s is rendered twice: from %s and from the extra manifest %s: remove it from %s, or leave the file out with spec.extraManifests: {exclude: [%s]}", id, from, files[0], files[0], files[0])
		}
		return fmt.Errorf("%s is rendered twice: from the bundle and from spec.examples: remove its kind from spec.examples, or drop the bundle's copy with spec.exclude", id)
	}
	return nil
}
