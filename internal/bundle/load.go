package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// Bundle layout and the annotation keys OLM reads from metadata/annotations.yaml.
const (
	ManifestsDir       = "manifests"
	MetadataDir        = "metadata"
	AnnotationsFile    = "metadata/annotations.yaml"
	PropertiesFile     = "metadata/properties.yaml"
	DependenciesFile   = "metadata/dependencies.yaml"
	PackageAnnotation  = "operators.operatorframework.io.bundle.package.v1"
	ChannelsAnnotation = "operators.operatorframework.io.bundle.channels.v1"
	// PropertiesAnnotation is the CSV annotation OLM merges metadata/properties.yaml into.
	PropertiesAnnotation = "olm.properties"
)

// LoadDir loads the registry+v1 bundle in dir (the directory holding
// manifests/ and metadata/). The files are read through an os.Root, so a
// symbolic link inside the bundle cannot make the loader read a file outside
// dir: repositories handed to the plugin are not trusted that far. Origin.Dir
// is the absolute directory and Origin.Digest a content hash (see LoadFS).
// Errors are *DirError, naming dir as given. The files of manifests/ that
// skip names are left unparsed (Origin.SkipFiles).
func LoadDir(dir string, skip ...string) (*Bundle, error) {
	return loadDir(dir, skip, nil)
}

func loadDir(dir string, skip []string, cache *ParseCache) (*Bundle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &DirError{dir, fsReason(err)}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, &DirError{dir, fsReason(err)}
	}
	defer root.Close()
	b, err := loadFS(root.FS(), Origin{Ref: dir, Dir: abs, SkipFiles: skip}, cache)
	if err != nil {
		return nil, &DirError{dir, err}
	}
	return b, nil
}

// LoadFS loads a registry+v1 bundle from fsys, whose root holds manifests/
// and metadata/. It follows OLM v1's loader (operator-controller
// rukpak/bundle/source FromFS) with these deliberate differences, each
// because silently doing something else would install the wrong thing:
//
//   - every YAML document of a file is read and `kind: List` (or any
//     `*List` with items) is flattened; JSON files may hold a stream of objects;
//   - entries of manifests/ whose name starts with "." are skipped (editor
//     and VCS droppings, Kubernetes' `..data` links when the bundle comes
//     from a mounted ConfigMap); every other entry must be a file holding
//     manifests, and a subdirectory is an error, as in OLM v1;
//   - exactly one ClusterServiceVersion is required (OLM v1 keeps the last);
//   - apiextensions.k8s.io/v1beta1 CRDs are refused: no supported Kubernetes
//     serves them, and OLM v1 silently drops their schema when it decodes
//     them into the v1 type;
//   - every object must have apiVersion and kind;
//   - metadata/dependencies.yaml that does not parse is recorded
//     (DependenciesUnreadable), not fatal: OLM v1 never reads it to render.
//
// A problem that belongs to one file of manifests/ (it does not parse, an
// object lacks apiVersion or kind, an unowned CRD is v1beta1) is a
// *FileError naming it: the bundle may load without it when the caller lists
// it in origin.SkipFiles, which the loader leaves unparsed. It refuses to
// skip the CSV or a CRD the CSV owns.
//
// As in OLM, metadata/properties.yaml is appended to the CSV's
// olm.properties annotation (on the typed CSV; Properties keeps the file's
// own entries). YAML anchors and aliases are expanded, so later edits of one
// object cannot leak into another through a shared node.
//
// When origin.Digest is empty it is set to a content hash: sha256 over the
// bundle files read (sorted by path), each as path, NUL, 8-byte big-endian
// length, content. The hash is stable across machines and checkouts.
func LoadFS(fsys fs.FS, origin Origin) (*Bundle, error) {
	return loadFS(fsys, origin, nil)
}

func loadFS(fsys fs.FS, origin Origin, cache *ParseCache) (*Bundle, error) {
	files, err := readFiles(fsys)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Origin: origin}
	if b.Annotations, err = parseAnnotations(b, files.all[AnnotationsFile]); err != nil {
		return nil, fmt.Errorf("%s: %w", AnnotationsFile, err)
	}
	b.Package = b.Annotations[PackageAnnotation]
	if b.Package == "" {
		return nil, fmt.Errorf("%s: annotation %s is missing or empty", AnnotationsFile, PackageAnnotation)
	}
	if b.Properties, err = parsePropertyFile(b, files.all, PropertiesFile, "properties"); err != nil {
		return nil, err
	}
	if b.Dependencies, err = parsePropertyFile(b, files.all, DependenciesFile, "dependencies"); err != nil {
		// OLM v1 never reads the file to render: the requirements report
		// says the dependencies are unknown instead.
		b.Dependencies, b.DependenciesUnreadable = nil, strings.TrimPrefix(err.Error(), DependenciesFile+": ")
	}
	manifests := skipFiles(b, files.manifests, origin.SkipFiles)
	if err := parseManifests(manifests, cache); err != nil {
		return nil, err
	}
	if err := classify(b, manifests); err != nil {
		return nil, err
	}
	if err := mergeCSVProperties(b); err != nil {
		return nil, err
	}
	if b.Origin.Digest == "" {
		b.Origin.Digest = contentDigest(files.all)
	}
	return b, nil
}

// DirDigest returns the content digest of the bundle in dir, the
// Origin.Digest LoadDir gives it (see LoadFS), reading its files without
// parsing them: caches key directory bundles on it. It is the one digest of
// a bundle directory. Errors are *DirError, naming dir as given.
func DirDigest(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", &DirError{dir, fsReason(err)}
	}
	defer root.Close()
	files, err := readFiles(root.FS())
	if err != nil {
		return "", &DirError{dir, err}
	}
	return contentDigest(files.all), nil
}

// bundleFiles are the files of a bundle the loader reads: the metadata files
// and every entry of manifests/. Loading and DirDigest read them through
// readFiles alone, so the digest covers exactly what a load reads.
type bundleFiles struct {
	all       map[string][]byte // bundle-relative path → content
	manifests []*manifestFile   // manifests/, sorted by name, not yet parsed
}

func readFiles(fsys fs.FS) (*bundleFiles, error) {
	files := &bundleFiles{all: map[string][]byte{}}
	annotations, err := readBundleFile(fsys, AnnotationsFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s not found: a registry+v1 bundle needs it to name its package", AnnotationsFile)
		}
		return nil, fmt.Errorf("reading %s: %w", AnnotationsFile, fsReason(err))
	}
	files.all[AnnotationsFile] = annotations
	for _, name := range []string{PropertiesFile, DependenciesFile} { // optional
		data, err := readBundleFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, fsReason(err))
		}
		files.all[name] = data
	}
	if files.manifests, err = readManifests(fsys, files.all); err != nil {
		return nil, err
	}
	return files, nil
}

// MaxFileBytes caps one bundle file. The API server stores no object over
// 1.5 MiB (etcd's request limit) and the largest real bundle file, a CRD, is
// 2 MB of YAML; a bigger file is a mistake or an attempt to exhaust memory.
const MaxFileBytes = 16 << 20

// readBundleFile reads a regular file of at most MaxFileBytes: a FIFO or a
// device would block or never end, a huge file exhaust memory.
func readBundleFile(fsys fs.FS, name string) ([]byte, error) {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s): a bundle holds only files and directories", fi.Mode().Type())
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit for one bundle file", fi.Size(), MaxFileBytes)
	}
	return fs.ReadFile(fsys, name)
}

// manifestFile is one file of manifests/ and the objects parsed from it.
type manifestFile struct {
	name string // bundle-relative path, e.g. manifests/foo.yaml
	data []byte
	docs []*yaml.Node // top-level document contents, one per YAML/JSON document
	// repeats is the warning about keys the file repeats with their value
	// (dropRepeatedKeys), "" when none.
	repeats string
	// marked says whether a document of the file holds an anchor or an
	// alias: only then does classify look for them object by object.
	marked bool
}

// readManifests reads manifests/, sorted by name as OLM's WalkDir does.
func readManifests(fsys fs.FS, read map[string][]byte) ([]*manifestFile, error) {
	entries, err := fs.ReadDir(fsys, ManifestsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s/ not found: a registry+v1 bundle keeps its objects there", ManifestsDir)
		}
		return nil, fmt.Errorf("reading %s/: %w", ManifestsDir, fsReason(err))
	}
	var files []*manifestFile
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := path.Join(ManifestsDir, e.Name())
		if echo.Text(name) != name {
			// Every message naming the file would carry it: a line break
			// ends the error line CI prints and forges the next.
			return nil, fmt.Errorf("%s: the file name holds a line break, an escape or another control or invisible character: rename the file", echo.Short(name))
		}
		if e.IsDir() {
			return nil, fmt.Errorf("%s: subdirectories are not allowed in %s/ of a registry+v1 bundle", name, ManifestsDir)
		}
		data, err := readBundleFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, fsReason(err))
		}
		read[name] = data
		files = append(files, &manifestFile{name: name, data: data})
	}
	return files, nil
}

// skipFiles records the files of manifests/ in b and returns those to parse:
// all but the ones skip names, which are read (the bundle's digest covers
// every file) but never parsed, so a file that cannot be parsed is no
// obstacle.
func skipFiles(b *Bundle, files []*manifestFile, skip []string) []*manifestFile {
	var keep []*manifestFile
	for _, f := range files {
		b.Files = append(b.Files, f.name)
		if slices.Contains(skip, f.name) {
			b.SkippedFiles = append(b.SkippedFiles, f.name)
			continue
		}
		keep = append(keep, f)
	}
	return keep
}

// parseManifests parses the files in parallel: YAML parsing is the whole
// cost of a load (3 MB of CRDs in the largest bundles) and files are
// independent. When several files fail, the error is the first file's in
// name order, whichever finished first.
func parseManifests(files []*manifestFile, cache *ParseCache) error {
	// Largest first, so one big CRD does not start last and leave the other
	// workers idle; results stay in file order because each job owns its slot.
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b *manifestFile) int { return len(b.data) - len(a.data) })
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	errs := make(map[*manifestFile]error, len(files))
	var mu sync.Mutex
	for _, f := range order {
		g.Go(func() error {
			// Repeated keys are dropped here, before anything reads a key
			// (classify reads apiVersion and kind).
			pf, err := cache.parse(f.data)
			if err != nil {
				mu.Lock()
				errs[f] = &FileError{File: f.name, Err: err}
				mu.Unlock()
				return nil
			}
			f.docs, f.repeats, f.marked = pf.docs, repeatsWarning(f.name, pf.repeats), pf.marked
			return nil
		})
	}
	g.Wait()
	for _, f := range files {
		if err := errs[f]; err != nil {
			return err
		}
	}
	return nil
}

// ParseDocuments returns the content node of every non-empty document in
// data (nil for an empty one, so numbering stays that of the file): the
// reader of bundle manifests and of catalog files alike. A file whose first
// byte is '{' is read as a JSON stream first (several concatenated objects
// are legal JSON streams but not YAML); if that fails it is parsed as YAML,
// whose error is the more useful one.
func ParseDocuments(data []byte) ([]*yaml.Node, error) {
	docs, _, err := parseDocuments(data)
	return docs, err
}

// parseDocuments is ParseDocuments; marked says whether a document holds
// an anchor or an alias (yamlsafe.ParseMarked; JSON has neither).
func parseDocuments(data []byte) (docs []*yaml.Node, marked bool, err error) {
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		// JSON too: a stream of a million small values is as costly to
		// parse. (yamlsafe.Parse below scans YAML itself.)
		if err := yamlsafe.PreScan(data); err != nil {
			return nil, false, err
		}
		if docs, err := parseJSONStream(t, bytes.Count(data[:len(data)-len(t)], []byte("\n"))); err == nil {
			for i, d := range docs {
				if d == nil {
					continue
				}
				if err := yamlsafe.Check(d, yamlsafe.DefaultLimits); err != nil {
					return nil, false, fmt.Errorf("document %d: %w", i+1, err)
				}
			}
			return docs, false, nil
		}
	}
	return yamlsafe.ParseMarked(data)
}

// parseJSONStream parses a stream of JSON values; lines before it is the
// number of lines the caller trimmed before data, so the nodes' lines are
// those of the file (messages name them).
func parseJSONStream(data []byte, linesBefore int) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := json.NewDecoder(bytes.NewReader(data))
	line, counted := linesBefore, 0 // line: the lines of data[:counted], plus linesBefore
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, err
		}
		start := int(dec.InputOffset()) - len(raw)
		line += bytes.Count(data[counted:start], []byte("\n"))
		counted = start
		var doc yaml.Node
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		if len(doc.Content) == 0 {
			docs = append(docs, nil)
			continue
		}
		n := doc.Content[0]
		blockStyle(n, line)
		docs = append(docs, n)
	}
}

// blockStyle turns a node parsed from JSON into ordinary block-style YAML, so
// objects from .json files serialize like every other object. Strings lose
// their forced double quotes; the encoder re-quotes those that need it.
// Lines move down by shift: the value was parsed alone.
func blockStyle(n *yaml.Node, shift int) {
	n.Style = 0
	n.Line += shift
	for _, c := range n.Content {
		blockStyle(c, shift)
	}
}

// classify sorts the parsed objects into the CSV, CRDs and the rest.
func classify(b *Bundle, files []*manifestFile) error {
	var csvs []string
	var csvNode *yaml.Node
	var v1beta1 []v1beta1CRD
	aliasNodes := 0 // added by expanding aliases, over the whole bundle
	for _, f := range files {
		if f.repeats != "" {
			b.Warnings = append(b.Warnings, f.repeats)
		}
		var objs []located
		for i, doc := range f.docs {
			if doc == nil || isNull(doc) {
				continue
			}
			var err error
			if objs, err = flatten(objs, doc, fmt.Sprintf("document %d", i+1)); err != nil {
				return &FileError{File: f.name, Err: err}
			}
		}
		for _, o := range objs {
			if f.marked && yamlsafe.HasAliases(o.node) {
				// Counted before anything expands: many files, each under
				// the per-file budget, must not add up to a bomb.
				added, err := yamlsafe.Measure(o.node, yamlsafe.DefaultLimits)
				if err == nil && aliasNodes+added > yamlsafe.DefaultLimits.MaxAliasNodes {
					err = fmt.Errorf("YAML aliases of the bundle's files would add more than %d nodes once expanded: write the repeated parts out", yamlsafe.DefaultLimits.MaxAliasNodes)
				}
				aliasNodes += added
				var n *yaml.Node
				if err == nil {
					n, err = yamlsafe.DeAnchor(o.node, yamlsafe.DefaultLimits)
				}
				if err != nil {
					return &FileError{File: f.name, Err: fmt.Errorf("%s: expanding YAML aliases: %w", o.where, err)}
				}
				o.node = n
			}
			switch {
			case o.kind == "ClusterServiceVersion":
				// Matched on kind alone, as OLM does: the CSV is never applied,
				// and real bundles ship `apiVersion: v1alpha1` (universal-crossplane).
				csvs = append(csvs, f.name)
				csvNode, b.CSVFile = o.node, f.name
			case o.kind == "CustomResourceDefinition" && o.apiVersion == "apiextensions.k8s.io/v1beta1":
				// Refused once the CSV says whether the operator owns it.
				v1beta1 = append(v1beta1, v1beta1CRD{f.name, o.where, o.name})
			case o.kind == "CustomResourceDefinition" && o.apiVersion == "apiextensions.k8s.io/v1":
				b.CRDs = append(b.CRDs, Object{File: f.name, RNode: yaml.NewRNode(o.node)})
			default:
				b.Others = append(b.Others, Object{File: f.name, RNode: yaml.NewRNode(o.node)})
			}
		}
	}
	switch len(csvs) {
	case 0:
		if len(b.SkippedFiles) > 0 {
			return fmt.Errorf("no ClusterServiceVersion found in %s/ once %s skipped, unread: the ClusterServiceVersion cannot be skipped; remove its file from the list", ManifestsDir, strings.Join(b.SkippedFiles, ", "))
		}
		return fmt.Errorf("no ClusterServiceVersion found in %s/", ManifestsDir)
	case 1:
	default:
		return fmt.Errorf("a bundle holds exactly one ClusterServiceVersion, found %d (in %s)", len(csvs), strings.Join(csvs, ", "))
	}
	if err := checkCSVVersion(b.CSVFile, csvNode); err != nil {
		return err
	}
	csv, err := decodeCSV(csvNode)
	if err != nil {
		return fmt.Errorf("%s: ClusterServiceVersion: %w", b.CSVFile, err)
	}
	b.CSV = csv
	if err := refuseV1beta1(csv, v1beta1); err != nil {
		return err
	}
	return checkSkippedOwned(b)
}

// v1beta1CRD is an apiextensions.k8s.io/v1beta1 CRD of the bundle.
type v1beta1CRD struct{ file, where, name string }

// refuseV1beta1 refuses the first v1beta1 CRD. No Kubernetes serves
// apiextensions.k8s.io/v1beta1 since 1.22, and OLM v1 installs such a CRD
// without its schema, which current clusters refuse: there is nothing to
// render. One the CSV owns is the operator's own API, so the only way out
// is another bundle version; one it does not own may be needless, and the
// file can then be skipped (a *FileError).
func refuseV1beta1(csv *v1alpha1.ClusterServiceVersion, crds []v1beta1CRD) error {
	if len(crds) == 0 {
		return nil
	}
	c := crds[0]
	msg := fmt.Sprintf("%s: CustomResourceDefinition %q is apiextensions.k8s.io/v1beta1, which no Kubernetes serves since 1.22 (OLM v1 would install it without its schema, which current clusters refuse)", c.where, c.name)
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		if o.Name == c.name {
			return fmt.Errorf("%s: %s; the ClusterServiceVersion owns it, so the operator cannot run without it: use a bundle version whose CRDs are apiextensions.k8s.io/v1 (or ask the vendor for one)", c.file, msg)
		}
	}
	return &FileError{File: c.file, Err: fmt.Errorf("%s; the ClusterServiceVersion does not own it", msg)}
}

// checkSkippedOwned refuses a load whose skipped files took a CRD the CSV
// owns with them: the operator needs its own APIs.
func checkSkippedOwned(b *Bundle) error {
	if len(b.SkippedFiles) == 0 {
		return nil
	}
	for _, o := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		if !slices.ContainsFunc(b.CRDs, func(c Object) bool { return c.GetName() == o.Name }) {
			return fmt.Errorf("the ClusterServiceVersion owns CustomResourceDefinition %q, and no file left once %s skipped holds it: the operator cannot run without it; skip only files it does not need", o.Name, strings.Join(b.SkippedFiles, ", "))
		}
	}
	return nil
}

// located is one object with the identity used in error messages.
type located struct {
	node                   *yaml.Node
	where                  string // "document 2" or "document 1, items[3]"
	apiVersion, kind, name string
}

// flatten appends obj, or the items of a List, to out after checking each is
// an object with apiVersion and kind. Any kind ending in "List" that has an
// items sequence is a list, as for kubectl (v1 List, ConfigMapList, …).
func flatten(out []located, n *yaml.Node, where string) ([]located, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: is a YAML %s, want an object (mapping)", where, kindName(n))
	}
	o := located{
		node:       n,
		where:      where,
		apiVersion: scalarField(n, "apiVersion"),
		kind:       scalarField(n, "kind"),
	}
	if md := field(n, "metadata"); md != nil {
		o.name = scalarField(md, "name")
	}
	if o.apiVersion == "" || o.kind == "" {
		var missing []string
		if o.apiVersion == "" {
			missing = append(missing, "apiVersion")
		}
		if o.kind == "" {
			missing = append(missing, "kind")
		}
		return nil, fmt.Errorf("%s: object has no %s", where, strings.Join(missing, " or "))
	}
	if strings.HasSuffix(o.kind, "List") {
		if items := field(n, "items"); items != nil {
			if items.Kind != yaml.SequenceNode {
				if isNull(items) {
					return out, nil
				}
				return nil, fmt.Errorf("%s: %s items is a YAML %s, want a sequence", where, o.kind, kindName(items))
			}
			var err error
			for i, item := range items.Content {
				if out, err = flatten(out, item, fmt.Sprintf("%s, items[%d]", where, i)); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	}
	return append(out, o), nil
}

// decodeCSV converts the node to JSON and decodes it with OLM's own types
// (their json tags are the contract, so encoding/json is what sigs.k8s.io/yaml
// would end up calling anyway).
func decodeCSV(n *yaml.Node) (*v1alpha1.ClusterServiceVersion, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("converting to JSON: %w", err)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := json.Unmarshal(data, csv); err != nil {
		return nil, describeJSONError(err)
	}
	return csv, nil
}

// describeJSONError names the field of a type mismatch in YAML terms.
func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %s: cannot use a JSON %s as %s", te.Field, te.Value, te.Type)
	}
	return err
}

// mergeCSVProperties appends metadata/properties.yaml to the CSV's
// olm.properties annotation, after the properties already there, exactly as
// OLM v1's copyMetadataPropertiesToCSV does.
func mergeCSVProperties(b *Bundle) error {
	if len(b.Properties) == 0 {
		return nil
	}
	var all []Property
	if existing, ok := b.CSV.Annotations[PropertiesAnnotation]; ok {
		if err := json.Unmarshal([]byte(existing), &all); err != nil {
			return fmt.Errorf("%s: ClusterServiceVersion annotation %s is not a JSON list of properties: %w", b.CSVFile, PropertiesAnnotation, err)
		}
	}
	all = append(all, b.Properties...)
	data, err := json.Marshal(all)
	if err != nil {
		return fmt.Errorf("encoding %s annotation: %w", PropertiesAnnotation, err)
	}
	if b.CSV.Annotations == nil {
		b.CSV.Annotations = map[string]string{}
	}
	b.CSV.Annotations[PropertiesAnnotation] = string(data)
	return nil
}

// parseAnnotations reads the `annotations:` mapping. Values are taken as
// written (a `channel.default.v1: 1.0` stays "1.0"), so odd but valid files
// do not fail on typing.
func parseAnnotations(b *Bundle, data []byte) (map[string]string, error) {
	docs, err := yamlsafe.Parse(data)
	if err != nil {
		return nil, err
	}
	if err := dropRepeatedMetadataKeys(b, AnnotationsFile, docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 || docs[0] == nil || docs[0].Kind != yaml.MappingNode {
		return nil, errors.New("want a mapping with an `annotations:` key")
	}
	m := field(docs[0], "annotations")
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, errors.New("no `annotations:` mapping")
	}
	out := make(map[string]string, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("annotation %q: value is a YAML %s, want a string", k.Value, kindName(v))
		}
		out[k.Value] = v.Value
	}
	return out, nil
}

// parsePropertyFile parses an optional metadata file holding
// `<key>: [{type, value}]`; absent from files, it has no entries.
func parsePropertyFile(b *Bundle, files map[string][]byte, name, key string) ([]Property, error) {
	data, ok := files[name]
	if !ok {
		return nil, nil
	}
	// Bounded first: sigs.k8s.io/yaml expands aliases as it decodes.
	docs, err := yamlsafe.Parse(data)
	if err == nil {
		// sigs.k8s.io/yaml below keeps the last of a repeated key, as OLM
		// v1 does: it is the same value once this passes.
		if err := dropRepeatedMetadataKeys(b, name, docs); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err != nil {
		if strings.Contains(err.Error(), "yaml: ") {
			// A syntax error. The YAML 1.1 parser's line is the one at or
			// just before the mistake; the newer parser's is often that of
			// the enclosing construct, lines earlier. It stops at the
			// error, before expanding anything.
			if _, err1 := sigsyaml.YAMLToJSON(data); err1 != nil {
				err = err1
			}
			return nil, fmt.Errorf("%s: not valid YAML near %s", name, plainYAMLError(err))
		}
		return nil, fmt.Errorf("%s: %s", name, plainYAMLError(err))
	}
	var file map[string][]Property
	if err := sigsyaml.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: want `%s:` with a list of {type, value}: %s", name, key, plainYAMLError(err))
	}
	props := file[key]
	for i, p := range props {
		if p.Type == "" {
			return nil, fmt.Errorf("%s: %s[%d] has no type", name, key, i)
		}
	}
	return props, nil
}

// plainYAMLError is a YAML parser's or decoder's error without the layers
// of prefixes the libraries add ("document 1: yaml: line 22: …" becomes
// "line 22: …").
func plainYAMLError(err error) string {
	msg := err.Error()
	for _, p := range []string{"document 1: ", "error converting YAML to JSON: ", "error unmarshaling JSON: while decoding JSON: ", "yaml: ", "json: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// contentDigest hashes the bundle files; see LoadFS and DirDigest.
func contentDigest(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	var size [8]byte
	for _, n := range names {
		io.WriteString(h, n)
		h.Write([]byte{0})
		binary.BigEndian.PutUint64(size[:], uint64(len(files[n])))
		h.Write(size[:])
		h.Write(files[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// field is m[key] for a mapping m; nil when m is nil, not a mapping or lacks
// key, so lookups chain (field(field(csv, "spec"), "version")).
func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalarField(m *yaml.Node, key string) string {
	if v := field(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return "scalar"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}
