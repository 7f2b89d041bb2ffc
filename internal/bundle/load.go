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

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

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
// Errors are *DirError, naming dir as given.
func LoadDir(dir string) (*Bundle, error) {
	return loadDir(dir, nil)
}

func loadDir(dir string, cache *ParseCache) (*Bundle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &DirError{dir, fsReason(err)}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, &DirError{dir, fsReason(err)}
	}
	defer root.Close()
	b, err := loadFS(root.FS(), Origin{Ref: dir, Dir: abs}, cache)
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
//   - every object must have apiVersion and kind.
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
	if b.Annotations, err = parseAnnotations(files.all[AnnotationsFile]); err != nil {
		return nil, fmt.Errorf("%s: %w", AnnotationsFile, err)
	}
	b.Package = b.Annotations[PackageAnnotation]
	if b.Package == "" {
		return nil, fmt.Errorf("%s: annotation %s is missing or empty", AnnotationsFile, PackageAnnotation)
	}
	if b.Properties, err = parsePropertyFile(files.all, PropertiesFile, "properties"); err != nil {
		return nil, err
	}
	if b.Dependencies, err = parsePropertyFile(files.all, DependenciesFile, "dependencies"); err != nil {
		return nil, err
	}
	if err := parseManifests(files.manifests, cache); err != nil {
		return nil, err
	}
	if err := classify(b, files.manifests); err != nil {
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

// parseManifests parses the files in parallel: YAML parsing is the whole
// cost of a load (3 MB of CRDs in the largest bundles) and files are
// independent.
func parseManifests(files []*manifestFile, cache *ParseCache) error {
	// Largest first, so one big CRD does not start last and leave the other
	// workers idle; results stay in file order because each job owns its slot.
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b *manifestFile) int { return len(b.data) - len(a.data) })
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range order {
		g.Go(func() error {
			docs, err := cache.parse(f.data)
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			f.docs = docs
			return nil
		})
	}
	return g.Wait()
}

// ParseDocuments returns the content node of every non-empty document in
// data (nil for an empty one, so numbering stays that of the file): the
// reader of bundle manifests and of catalog files alike. A file whose first
// byte is '{' is read as a JSON stream first (several concatenated objects
// are legal JSON streams but not YAML); if that fails it is parsed as YAML,
// whose error is the more useful one.
func ParseDocuments(data []byte) ([]*yaml.Node, error) {
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		if docs, err := parseJSONStream(t); err == nil {
			for i, d := range docs {
				if d == nil {
					continue
				}
				if err := yamlsafe.Check(d, yamlsafe.DefaultLimits); err != nil {
					return nil, fmt.Errorf("document %d: %w", i+1, err)
				}
			}
			return docs, nil
		}
	}
	return yamlsafe.Parse(data)
}

func parseJSONStream(data []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, err
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		if len(doc.Content) == 0 {
			docs = append(docs, nil)
			continue
		}
		n := doc.Content[0]
		blockStyle(n)
		docs = append(docs, n)
	}
}

// blockStyle turns a node parsed from JSON into ordinary block-style YAML, so
// objects from .json files serialize like every other object. Strings lose
// their forced double quotes; the encoder re-quotes those that need it.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// classify sorts the parsed objects into the CSV, CRDs and the rest.
func classify(b *Bundle, files []*manifestFile) error {
	var csvs []string
	var csvNode *yaml.Node
	for _, f := range files {
		var objs []located
		for i, doc := range f.docs {
			if doc == nil || isNull(doc) {
				continue
			}
			var err error
			if objs, err = flatten(objs, doc, fmt.Sprintf("document %d", i+1)); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		for _, o := range objs {
			if yamlsafe.HasAliases(o.node) {
				n, err := yamlsafe.DeAnchor(o.node, yamlsafe.DefaultLimits)
				if err != nil {
					return fmt.Errorf("%s: %s: expanding YAML aliases: %w", f.name, o.where, err)
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
				return fmt.Errorf("%s: %s: CustomResourceDefinition %q is apiextensions.k8s.io/v1beta1, which Kubernetes stopped serving in 1.22; convert it to apiextensions.k8s.io/v1", f.name, o.where, o.name)
			case o.kind == "CustomResourceDefinition" && o.apiVersion == "apiextensions.k8s.io/v1":
				b.CRDs = append(b.CRDs, Object{File: f.name, RNode: yaml.NewRNode(o.node)})
			default:
				b.Others = append(b.Others, Object{File: f.name, RNode: yaml.NewRNode(o.node)})
			}
		}
	}
	switch len(csvs) {
	case 0:
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
func parseAnnotations(data []byte) (map[string]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("want a mapping with an `annotations:` key")
	}
	m := field(doc.Content[0], "annotations")
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
func parsePropertyFile(files map[string][]byte, name, key string) ([]Property, error) {
	data, ok := files[name]
	if !ok {
		return nil, nil
	}
	var file map[string][]Property
	if err := sigsyaml.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: want `%s:` with a list of {type, value}: %w", name, key, err)
	}
	props := file[key]
	for i, p := range props {
		if p.Type == "" {
			return nil, fmt.Errorf("%s: %s[%d] has no type", name, key, i)
		}
	}
	return props, nil
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
