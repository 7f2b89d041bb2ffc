// Package spec defines olm-cmp.yaml: the one typed, validated description of
// what to render. The CLI, the Argo CD plugin and the HTTP API all build a
// Spec and hand it to the render package.
package spec

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/editdist"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// FileName is the spec file looked for in a source directory; its presence is
// also how the Argo CD plugin discovers applications it should render.
const FileName = "olm-cmp.yaml"

const (
	APIVersion = "olm-cmp.dev/v1alpha1"
	Kind       = "OperatorBundle"
)

// File is the whole olm-cmp.yaml document.
type File struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`

	// src is where the file was read from, for messages about its values
	// to name their line (nil for a File built in code).
	src *source
}

// source remembers where each value of a parsed file is.
type source struct {
	name string
	// lines maps field paths (spec.watchNamespaces[1]) to lines.
	lines map[string]int
	// decoded is the JSON of each spec field as the file wrote it: a
	// message about a field that an override changed names no line.
	decoded map[string]json.RawMessage
}

// Metadata names the rendered operator (used in logs and annotations).
type Metadata struct {
	Name string `json:"name,omitempty"`
}

// Spec says which bundle to render and how to adapt it to a cluster without OLM.
// Field names are also the Argo CD plugin parameter names.
type Spec struct {
	// Bundle is an OCI image reference (tag or @digest optional) or a directory
	// relative to the source directory (./bundle).
	Bundle string `json:"bundle,omitempty"`
	// Catalog names the bundle through a file-based catalog instead of Bundle:
	// a catalog image reference, or a directory holding the catalog relative to
	// the source directory (./catalog). Package picks the package in it.
	Catalog string `json:"catalog,omitempty"`
	// Package is the OLM package to take from Catalog.
	Package string `json:"package,omitempty"`
	// Channel restricts Catalog's candidates to a channel (several separated
	// by commas); empty means every channel, as in OLM v1.
	Channel string `json:"channel,omitempty"`
	// Version is the image tag to use when Bundle has neither tag nor digest;
	// with Catalog, a version range (Masterminds semver constraint, as OLM v1's
	// ClusterExtension versions: "1.2.x", ">=1.0.0 <2", "1.2.3"), empty meaning
	// the newest.
	Version string `json:"version,omitempty"`
	// Digest pins the bundle image the render must produce, by its manifest
	// digest (sha256:…): the image bundle+version names, or the bundle the
	// catalog chooses. `olm-cmp resolve --write` writes it beside Version,
	// so a bump stays a change of Version, and a render whose version (or
	// moved tag) names another image fails, naming both digests and this
	// field, instead of rendering either one silently.
	Digest string `json:"digest,omitempty"`
	// Namespace is the install namespace (required).
	Namespace string `json:"namespace,omitempty"`
	// CreateNamespace adds the Namespace object (default true).
	CreateNamespace *bool `json:"createNamespace,omitempty"`
	// NamespaceLabels and NamespaceAnnotations are set on the install
	// Namespace the render holds (pod-security.kubernetes.io/enforce for an
	// operator whose pods need privileges).
	NamespaceLabels      map[string]string `json:"namespaceLabels,omitempty"`
	NamespaceAnnotations map[string]string `json:"namespaceAnnotations,omitempty"`
	// WatchNamespaces are the namespaces the operator watches. Empty means all
	// namespaces if the CSV supports AllNamespaces, else the install namespace if
	// it supports OwnNamespace.
	WatchNamespaces []string `json:"watchNamespaces,omitempty"`
	// ImagePullSecrets are Secret names added to every rendered ServiceAccount.
	ImagePullSecrets []string `json:"imagePullSecrets,omitempty"`
	// ServiceAccounts are extra ServiceAccounts to pre-create (operand SAs the
	// operator creates later), so they carry the pull secrets too.
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	// AuthReaderBinding adds a RoleBinding in kube-system to the Role
	// extension-apiserver-authentication-reader for the operator's ServiceAccounts.
	AuthReaderBinding bool `json:"authReaderBinding,omitempty"`
	// Exclude drops objects matching [group/]Kind[/name]; * globs.
	Exclude []string `json:"exclude,omitempty"`
	// ExcludeFiles are files of the bundle's manifests/ the loader skips
	// unread ("manifests/broken.yaml"): the way past a vendor's file that
	// does not parse. Exact paths, as load errors name them.
	ExcludeFiles []string `json:"excludeFiles,omitempty"`
	// ExtraManifests chooses which files beside olm-cmp.yaml join the
	// render; nil means every *.yaml, *.yml and *.json file there.
	ExtraManifests *ExtraManifests `json:"extraManifests,omitempty"`
	// Images are image prefix rewrites (from → to), longest prefix first.
	Images map[string]string `json:"images,omitempty"`
	// Config is OLM's SubscriptionConfig, applied to every operator Deployment.
	Config *v1alpha1.SubscriptionConfig `json:"config,omitempty"`
	// CertificateProvider issues webhook certificates: cert-manager, service-ca
	// or none. Default cert-manager when the bundle has webhooks.
	CertificateProvider string `json:"certificateProvider,omitempty"`
	// Examples are kinds of the CSV's alm-examples to render as CRs.
	Examples []string `json:"examples,omitempty"`
	// Patches are kustomize patches (strategic merge or JSON 6902, with target).
	Patches []kustomizetypes.Patch `json:"patches,omitempty"`
	// SyncWaves overrides the default Argo CD sync wave of each group.
	SyncWaves SyncWaves `json:"syncWaves,omitempty"`
	// KeepCRDs protects CRDs from deletion by Argo CD (default true).
	KeepCRDs *bool `json:"keepCRDs,omitempty"`
	// Strict turns the requirements report's findings and spec entries
	// that match nothing into errors.
	Strict bool `json:"strict,omitempty"`
	// RequireSignature demands that the bundle image (and the catalog image,
	// when spec.catalog names one) verify against the cluster's trust policy,
	// even where the policy says warn or off: an Application can tighten the
	// policy, never loosen it (false leaves the policy as it is). A directory
	// bundle or catalog, which nothing signs, is then refused.
	RequireSignature bool `json:"requireSignature,omitempty"`
	// ClusterAPIs are APIs the target cluster serves beyond vanilla
	// Kubernetes ("cert-manager.io/v1", or a group alone for every version):
	// the requirements report counts them as served.
	ClusterAPIs []string `json:"clusterAPIs,omitempty"`
	// Accept are requirements findings the user accepts knowingly,
	// "category:subject" with * globs ("api:route.openshift.io"): still
	// reported, never warned about or failed on.
	Accept []string `json:"accept,omitempty"`
	// UpgradeFrom, when set, is the version the cluster runs today: the render
	// fails if the upgrade from it to this spec's bundle is unsafe (CRD
	// upgrade safety as OLM v1 checks it).
	UpgradeFrom string `json:"upgradeFrom,omitempty"`
	// UpgradeConstraintPolicy is OLM v1's ClusterExtension field of the
	// same name and values: CatalogProvided (the default, "" too) refuses
	// an upgrade the catalog's (or the CSVs') replaces, skips and
	// olm.skipRange do not lead to; SelfCertified lets it through with a
	// warning, the user having checked it.
	UpgradeConstraintPolicy string `json:"upgradeConstraintPolicy,omitempty"`
	// Acknowledge are safety findings of an upgrade (spec.upgradeFrom,
	// olm-cmp diff) judged and accepted by a person, each scoped to one rule,
	// CRD, version and path: an acknowledged error no longer fails. Narrow on
	// purpose: SelfCertified (UpgradeConstraintPolicy) passes every upgrade
	// edge of every bump.
	Acknowledge []Acknowledgement `json:"acknowledge,omitempty"`
}

// Acknowledgement names one safety finding exactly (the fields `olm-cmp
// diff -o json` prints; an empty field matches a finding without one) and
// says why it is safe.
type Acknowledgement struct {
	Rule    string `json:"rule"`
	CRD     string `json:"crd,omitempty"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
	Reason  string `json:"reason"`
}

// String is "rule CRD version path", the parts the entry has.
func (a Acknowledgement) String() string {
	parts := []string{a.Rule}
	for _, p := range []string{a.CRD, a.Version, a.Path} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// ExtraManifests lists (Include) or ignores (Exclude) the files of the
// source directory's top level that are extra manifests, by file-name glob
// (path.Match: *, ?, [a-z]). Without Include every *.yaml, *.yml and *.json
// file is one; Exclude then drops files from that set. Users keeping other
// YAML beside the spec (a values file, saved render output) say so here.
type ExtraManifests struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// SyncWaves holds one wave per group; nil means the default. Strict order
// between groups is enforced by Validate.
type SyncWaves struct {
	CRDs     *int `json:"crds,omitempty"`
	RBAC     *int `json:"rbac,omitempty"`
	Operator *int `json:"operator,omitempty"`
	Webhooks *int `json:"webhooks,omitempty"`
	CRs      *int `json:"crs,omitempty"`
}

// Default waves: Namespace + CRDs < ServiceAccounts + RBAC < operator <
// webhook configurations / APIServices < custom resources.
const (
	DefaultWaveCRDs     = -4
	DefaultWaveRBAC     = -3
	DefaultWaveOperator = -2
	DefaultWaveWebhooks = -1
	DefaultWaveCRs      = 0
)

// Waves are the effective waves after defaults.
type Waves struct{ CRDs, RBAC, Operator, Webhooks, CRs int }

// Effective fills defaults in.
func (w SyncWaves) Effective() Waves {
	pick := func(p *int, d int) int {
		if p != nil {
			return *p
		}
		return d
	}
	return Waves{
		CRDs:     pick(w.CRDs, DefaultWaveCRDs),
		RBAC:     pick(w.RBAC, DefaultWaveRBAC),
		Operator: pick(w.Operator, DefaultWaveOperator),
		Webhooks: pick(w.Webhooks, DefaultWaveWebhooks),
		CRs:      pick(w.CRs, DefaultWaveCRs),
	}
}

// Certificate provider names accepted in CertificateProvider.
const (
	CertProviderCertManager = "cert-manager"
	CertProviderServiceCA   = "service-ca"
	CertProviderNone        = "none"
)

// The values of UpgradeConstraintPolicy, spelt as OLM v1's ClusterExtension
// spells them.
const (
	UpgradeCatalogProvided = "CatalogProvided"
	UpgradeSelfCertified   = "SelfCertified"
)

// UpgradePolicy reports the effective upgradeConstraintPolicy:
// CatalogProvided unless the spec says SelfCertified.
func (s *Spec) UpgradePolicy() string {
	if s.UpgradeConstraintPolicy == UpgradeSelfCertified {
		return UpgradeSelfCertified
	}
	return UpgradeCatalogProvided
}

// CreatesNamespace reports the effective createNamespace.
func (s *Spec) CreatesNamespace() bool { return s.CreateNamespace == nil || *s.CreateNamespace }

// CertProvider reports the effective certificateProvider of a bundle that
// has webhooks or not: the spec's, else cert-manager when there are webhooks
// to serve, else none.
func (s *Spec) CertProvider(hasWebhooks bool) string {
	switch {
	case s.CertificateProvider != "":
		return s.CertificateProvider
	case hasWebhooks:
		return CertProviderCertManager
	}
	return CertProviderNone
}

// KeepsCRDs reports the effective keepCRDs.
func (s *Spec) KeepsCRDs() bool { return s.KeepCRDs == nil || *s.KeepCRDs }

// Parse decodes an olm-cmp.yaml document. Every problem of the file is
// reported at once, one per line: YAML that does not fit the spec (unknown
// keys, with the known key they were probably meant to be; values of the
// wrong type; keys set twice), a wrong apiVersion or kind, and, alongside
// those, Validate's problems with the fields that did decode. name is used
// in messages (usually the file path). Such problems come as a *FileError,
// which also holds what decoded; YAML that cannot be read at all is a plain
// error.
func Parse(name string, data []byte) (*File, error) {
	var f File
	lines := map[string]int{}
	problems, err := decodeAt(data, &f, "", lines)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.src = &source{name: name, lines: lines, decoded: specFields(&f.Spec)}
	fe := &FileError{Name: name, File: &f, problems: problems}
	if !fe.has("apiVersion") && !fe.has("kind") && (f.APIVersion != APIVersion || f.Kind != Kind) {
		// Not an olm-cmp.yaml at all: its spec's problems would be noise.
		fe.wrongKind = true
		fe.problems = slices.DeleteFunc(fe.problems, func(p problem) bool { return p.specField() != "" })
		fe.problems = append(fe.problems, kindProblem(&f, lines, len(problems) == 0 && blank(data)))
	}
	if len(fe.problems) == 0 {
		return &f, nil
	}
	fe.Revalidate(&f.Spec)
	return &f, fe
}

// Load reads dir/olm-cmp.yaml.
func Load(dir string) (*File, error) {
	p := filepath.Join(dir, FileName)
	// A regular file of a spec's size: a FIFO would block, a huge file cost
	// memory and time for nothing a spec needs.
	if fi, err := os.Stat(p); err == nil && (!fi.Mode().IsRegular() || fi.Size() > MaxFileBytes) {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", p)
		}
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte limit for %s", p, fi.Size(), MaxFileBytes, FileName)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, notFoundError{dir}
		}
		return nil, err
	}
	return Parse(p, data)
}

// DecodeStrict decodes YAML or JSON into v, case-sensitively, as Parse
// decodes olm-cmp.yaml: every unknown key, duplicate key and value of the
// wrong type is reported, one per line, each with its line and field path.
func DecodeStrict(data []byte, v any) error {
	problems, err := decode(data, v)
	if err != nil {
		return err
	}
	lines := make([]error, len(problems))
	for i, p := range problems {
		lines[i] = errors.New(p.String())
	}
	return errors.Join(lines...)
}

// decode reads the one YAML document of data into v (a pointer). The
// hostile-input limits (yamlsafe: size, depth, alias bombs and cycles) are
// checked before anything walks the document. The error is for data that is
// not one readable YAML document; the problems are what does not fit v.
func decode(data []byte, v any) ([]problem, error) { return decodeAt(data, v, "", nil) }

// decodeAt is decode for a value found at path in a spec (an override of
// spec.config is decoded at "config"), so problems name the whole path.
// lines, when not nil, receives the line of each field path's value.
func decodeAt(data []byte, v any, path string, lines map[string]int) ([]problem, error) {
	docs, err := yamlsafe.Parse(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "document 1: ")
		if rest, ok := strings.CutPrefix(msg, "yaml: "); ok {
			return nil, fmt.Errorf("not valid YAML: %s", plainSyntax(data, syntaxError(data, rest)))
		}
		return nil, errors.New(msg)
	}
	var root *yaml.Node
	for _, d := range docs {
		if d == nil {
			continue
		}
		if root != nil {
			return nil, fmt.Errorf("line %d: a second YAML document: the file holds one document (remove the --- and what follows)", d.Line)
		}
		root = d
	}
	if root == nil {
		return nil, nil // an empty file decodes to the zero value
	}
	t := reflect.TypeOf(v).Elem()
	if root = resolveAlias(root); root.Kind != yaml.MappingNode && t.Kind() == reflect.Struct {
		return nil, fmt.Errorf("line %d: expected a map of fields, got %s", root.Line, describeNode(root))
	}
	w := &walker{spec: t == reflect.TypeFor[File]() && path == "", lines: lines}
	tree, ok := w.value(root, t, path)
	if !ok {
		return w.problems, nil
	}
	js, err := json.Marshal(tree)
	if err == nil {
		err = json.Unmarshal(js, v)
	}
	if err != nil {
		// The walk checked every value against its type; this would be a
		// type it does not know, named rather than hidden.
		w.problems = append(w.problems, problem{line: root.Line, msg: strings.TrimPrefix(err.Error(), "json: ")})
	}
	return w.problems, nil
}

// syntaxError returns the YAML 1.1 parser's description of a syntax error
// that the YAML 1.2 parser (go.yaml.in/yaml/v3) reported as v3msg: v3 counts
// lines from 0 when it points at where a construct began ("spec: [unclosed"
// on line 3 is "line 2"), the older parser from 1. It only runs on data the
// hostile-input limits passed and the newer parser refused, and a syntax
// error stops it before it expands anything.
func syntaxError(data []byte, v3msg string) string {
	if _, err := sigsyaml.YAMLToJSON(data); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
		if msg, ok := strings.CutPrefix(msg, "yaml: "); ok && !strings.Contains(msg, "\n") {
			return msg
		}
	}
	return v3msg
}

// MaxFileBytes caps olm-cmp.yaml: a spec is a few hundred bytes.
const MaxFileBytes = 1 << 20

// FileError is every problem of one olm-cmp.yaml, one per line. File holds
// what decoded (a field with a problem is left empty), so a caller that
// changes the spec (command-line flags, plugin parameters) can check the
// result with Revalidate and still report everything at once.
type FileError struct {
	Name string
	File *File
	// problems are those of decoding (and apiVersion/kind), in file order.
	problems []problem
	// semantic are Validate's problems with the fields that decoded.
	semantic  []error
	wrongKind bool
}

// Revalidate replaces the error's Validate problems with those of s,
// leaving out the fields that did not decode (their value is not the
// file's).
func (e *FileError) Revalidate(s *Spec) {
	e.semantic = nil
	if e.wrongKind {
		return
	}
	err := s.Validate()
	if err == nil {
		return
	}
	all := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		all = j.Unwrap()
	}
	for _, v := range all {
		if !e.covers(v.Error()) {
			e.semantic = append(e.semantic, v)
		}
	}
}

// has reports whether a decoding problem is at path or under it.
func (e *FileError) has(path string) bool {
	for _, p := range e.problems {
		if p.path == path || strings.HasPrefix(p.path, path+".") || strings.HasPrefix(p.path, path+"[") {
			return true
		}
	}
	return false
}

// covers reports whether msg, one of Validate's, is about a spec field that
// already has a decoding problem.
func (e *FileError) covers(msg string) bool {
	for _, p := range e.problems {
		f := p.specField()
		if f == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(msg, "spec."+f); ok && (rest == "" || strings.ContainsRune(" [:.", rune(rest[0]))) {
			return true
		}
	}
	return false
}

func (e *FileError) Error() string {
	lines := make([]string, 0, len(e.problems)+len(e.semantic))
	for _, p := range e.problems {
		lines = append(lines, e.Name+": "+p.String())
	}
	for _, s := range e.semantic {
		lines = append(lines, e.File.at(s.Error(), &e.File.Spec))
	}
	return strings.Join(lines, "\n")
}

// blank reports whether data holds nothing but blank lines and comments.
func blank(data []byte) bool {
	for l := range strings.SplitSeq(string(data), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			return false
		}
	}
	return true
}

// kindProblem says that f is not an olm-cmp.yaml (empty, when the file
// holds nothing), at the line of its kind
// (or apiVersion), with what to write; an OLM object's kind is told apart.
func kindProblem(f *File, lines map[string]int, empty bool) problem {
	if empty {
		return problem{msg: fmt.Sprintf("the file is empty: an olm-cmp spec starts with apiVersion: %s and kind: %s, then spec (docs/spec.md); olm-cmp init writes a first one", APIVersion, Kind)}
	}
	line, field := lines["kind"], "kind"
	if f.Kind == Kind || line == 0 {
		line, field = lines["apiVersion"], "apiVersion"
	}
	msg := fmt.Sprintf("%s: an olm-cmp spec starts with apiVersion: %s and kind: %s, got %s and %s", field, APIVersion, Kind, echo.Quote(f.APIVersion), echo.Quote(f.Kind))
	switch f.Kind {
	case "Subscription", "ClusterExtension", "OperatorGroup", "CatalogSource":
		msg += fmt.Sprintf(": an OLM %s is not an olm-cmp spec; write kind: %s and name the bundle with spec.bundle, or spec.catalog and spec.package (docs/spec.md)", f.Kind, Kind)
	}
	return problem{line: line, path: field, msg: msg}
}

// specFields returns the JSON of each field of s, by JSON name.
func specFields(s *Spec) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if b, err := json.Marshal(s); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// Validate validates s, the file's spec after any overrides (command-line
// flags, plugin parameters), as Spec.Validate does, naming the file and
// line of each problem in a field the overrides left as the file wrote it.
func (f *File) Validate(s *Spec) error {
	err := s.Validate()
	if err == nil || f == nil || f.src == nil {
		return err
	}
	all := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		all = j.Unwrap()
	}
	out := make([]error, len(all))
	for i, e := range all {
		out[i] = errors.New(f.at(e.Error(), s))
	}
	return errors.Join(out...)
}

// Locate prefixes each line of err, a render's error about s (the file's
// spec after overrides), with the file and line of the field it names
// ("patches[0]: ..." or "spec.namespace ..."), as Validate does; other
// lines, and errors about values an override replaced, are left as they
// are. errors.Is and errors.As see err.
func (f *File) Locate(err error, s *Spec) error {
	if err == nil || f == nil || f.src == nil {
		return err
	}
	lines := strings.Split(err.Error(), "\n")
	changed := false
	for i, l := range lines {
		m := entryPath(l, s)
		if out := f.at(m, s); out != m {
			lines[i] = strings.TrimSuffix(out, m) + l
			changed = true
		}
	}
	if !changed {
		return err
	}
	return &locatedError{msg: strings.Join(lines, "\n"), err: err}
}

// entryPath rewrites l, one line of a render's error, so that its first
// word is the spec path of the field it is about, for at to find the line:
// "patches[0]: ..." is about spec.patches[0], and strict's entries that
// matched nothing name theirs in the steps' words ("strict: exclude "X"
// matched no object" is about the spec.exclude item "X").
func entryPath(l string, s *Spec) string {
	l = strings.TrimPrefix(l, "strict: ")
	word, rest, _ := strings.Cut(l, " ")
	switch {
	case strings.HasPrefix(l, "patches["), strings.HasPrefix(l, "config."):
		return "spec." + l
	case word == "exclude", word == "images", word == "accept":
		v, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return l
		}
		v, _ = strconv.Unquote(v)
		path := "spec." + word
		switch word {
		case "exclude":
			if i := slices.Index(s.Exclude, v); i >= 0 {
				path = fmt.Sprintf("%s[%d]", path, i)
			}
		case "accept":
			if i := slices.Index(s.Accept, v); i >= 0 {
				path = fmt.Sprintf("%s[%d]", path, i)
			}
		case "images":
			if _, ok := s.Images[v]; ok {
				path = keyPath(path, v)
			}
		}
		return path + " " + rest
	}
	return l
}

// locatedError is an error with file and line prefixes added to its text.
type locatedError struct {
	msg string
	err error
}

func (e *locatedError) Error() string { return e.msg }
func (e *locatedError) Unwrap() error { return e.err }

// at prefixes msg, one of Validate's messages ("spec.namespace "X": ..."),
// with the file and line of the value it is about, when the file wrote
// that value and s still holds it.
func (f *File) at(msg string, s *Spec) string {
	if f == nil || f.src == nil {
		return msg
	}
	path, _, _ := strings.Cut(msg, " ")
	path = strings.TrimSuffix(path, ":")
	field, ok := strings.CutPrefix(path, "spec.")
	if !ok {
		return msg
	}
	if i := strings.IndexAny(field, ".["); i >= 0 {
		field = field[:i]
	}
	if !bytes.Equal(f.src.decoded[field], specFields(s)[field]) {
		return msg
	}
	for p := path; p != ""; {
		if line := f.src.lines[p]; line > 0 {
			return fmt.Sprintf("%s: line %d: %s", f.src.name, line, msg)
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= len("spec") {
			break
		}
		p = p[:i]
	}
	return msg
}

// hasUserinfo reports whether ref starts with user:password@ (or user@), the
// URL way of writing a credential: an "@" in the registry part, before the
// first "/". An image reference's only "@" introduces its digest, after the
// last "/" ("busybox@sha256:…" has no "/" at all), and a local path starts
// with "." or "/".
func hasUserinfo(ref string) bool {
	ref = strings.TrimPrefix(strings.TrimPrefix(ref, "https://"), "http://")
	head, rest, found := strings.Cut(ref, "/")
	return found && rest != "" && strings.Contains(head, "@")
}

// Redact returns ref with a credential (user:password@) replaced by "***@",
// for log lines, which record what a request named even when it was refused.
func Redact(ref string) string {
	if !hasUserinfo(ref) {
		return ref
	}
	scheme := ""
	for _, p := range []string{"https://", "http://"} {
		if strings.HasPrefix(ref, p) {
			scheme, ref = p, strings.TrimPrefix(ref, p)
		}
	}
	head, rest, _ := strings.Cut(ref, "/")
	return scheme + "***@" + head[strings.LastIndex(head, "@")+1:] + "/" + rest
}

// Validate checks the spec after CLI/plugin overrides and reports every
// problem at once, each naming its field.
func (s *Spec) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	// A reference with user:password@ carries a credential in Git. It is
	// refused before anything else reads it, and never repeated: every later
	// message would print it.
	for field, ref := range map[string]string{"spec.bundle": s.Bundle, "spec.catalog": s.Catalog} {
		if hasUserinfo(ref) {
			return fmt.Errorf("%s holds a credential (user:password@ before the registry): remove it; registry credentials belong in the sidecar's docker config (docs/operations.md)", field)
		}
	}
	switch {
	case strings.TrimSpace(s.Catalog) != "":
		if s.Bundle != "" {
			add("spec.bundle and spec.catalog are both set: name the bundle either directly (spec.bundle) or through a catalog (spec.catalog, spec.package)")
		}
		if strings.TrimSpace(s.Package) == "" {
			add("spec.package is required with spec.catalog: the OLM package to install from the catalog")
		} else if strings.ContainsAny(s.Package, " \t\n,/") {
			add("spec.package %s: not a package name", echo.Quote(s.Package))
		}
		if s.Version != "" {
			// The same parser the catalog resolution uses, so a range that
			// passes here never fails there.
			if _, err := mmsemver.NewConstraint(s.Version); err != nil {
				add("spec.version %s: not a version range (e.g. 1.2.x, \">=1.0.0 <2\", 1.2.3): %s", echo.Quote(s.Version), echo.Short(err.Error()))
			}
		}
	case s.Catalog != "":
		add("spec.catalog is empty: a catalog image reference or a directory (./catalog)")
	default:
		if strings.TrimSpace(s.Bundle) == "" {
			add("spec.bundle is required: an image reference (registry.example.com/org/bundle:1.0) or a directory (./bundle); or name a catalog and package (spec.catalog, spec.package)")
		}
		if s.Package != "" {
			add("spec.package %s is set without spec.catalog: a package is looked up in a catalog", echo.Quote(s.Package))
		}
		if s.Channel != "" {
			add("spec.channel %s is set without spec.catalog: a channel is looked up in a catalog; set spec.catalog and spec.package, or remove spec.channel and name the bundle's version with spec.version (its image tag)", echo.Quote(s.Channel))
		}
	}
	if s.Digest != "" {
		if msg := checkDigest(s.Digest); msg != "" {
			add("spec.digest %q: %s", s.Digest, msg)
		} else if d := refDigest(s.Bundle); d != "" && d != s.Digest {
			add("spec.digest %q and the digest of spec.bundle %q differ: keep one pin (olm-cmp resolve --write writes spec.digest)", s.Digest, s.Bundle)
		}
	}
	if s.Namespace == "" {
		add("spec.namespace is required: the namespace the operator is installed in")
	} else if msg := dns1123Label(s.Namespace); msg != "" {
		add("spec.namespace %s: %s", echo.Quote(s.Namespace), msg)
	}
	errs = append(errs, checkNamespaceMetadata(s.NamespaceLabels, s.NamespaceAnnotations)...)
	for i, ns := range s.WatchNamespaces {
		if ns == "" {
			continue // "" means all namespaces, as in OLM
		}
		if msg := dns1123Label(ns); msg != "" {
			add("spec.watchNamespaces[%d] %s: %s", i, echo.Quote(ns), msg)
		}
	}
	for i, n := range s.ImagePullSecrets {
		if msg := dns1123Subdomain(n); msg != "" {
			add("spec.imagePullSecrets[%d] %s: %s", i, echo.Quote(n), msg)
		}
	}
	for i, n := range s.ServiceAccounts {
		if msg := dns1123Subdomain(n); msg != "" {
			add("spec.serviceAccounts[%d] %s: %s", i, echo.Quote(n), msg)
		}
	}
	switch s.CertificateProvider {
	case "", CertProviderCertManager, CertProviderServiceCA, CertProviderNone:
	default:
		add("spec.certificateProvider %s: must be one of cert-manager, service-ca, none", echo.Quote(s.CertificateProvider))
	}
	for i, e := range s.Exclude {
		if err := ValidateSelector(e); err != nil {
			add("spec.exclude[%d]: %v", i, err)
		}
	}
	if len(s.ExcludeFiles) > MaxExcludeFiles {
		add("spec.excludeFiles: %d entries, at most %d", len(s.ExcludeFiles), MaxExcludeFiles)
	} else {
		for i, f := range s.ExcludeFiles {
			if msg := checkExcludeFile(f); msg != "" {
				add("spec.excludeFiles[%d] %q: %s", i, truncate(f, 80), msg)
			}
		}
	}
	if em := s.ExtraManifests; em != nil {
		for _, l := range []struct {
			name  string
			globs []string
		}{{"include", em.Include}, {"exclude", em.Exclude}} {
			if len(l.globs) > MaxExtraManifestGlobs {
				add("spec.extraManifests.%s: %d entries, at most %d", l.name, len(l.globs), MaxExtraManifestGlobs)
				continue
			}
			for i, g := range l.globs {
				if msg := checkExtraManifestGlob(g); msg != "" {
					add("spec.extraManifests.%s[%d] %s: %s", l.name, i, echo.Quote(g), msg)
				}
			}
		}
	}
	for _, from := range slices.Sorted(maps.Keys(s.Images)) {
		to := s.Images[from]
		switch {
		case from == "" || to == "":
			add("spec.images: %s -> %s: both the prefix and its replacement must be non-empty", echo.Quote(from), echo.Quote(to))
		// The rest of the image after the prefix is appended to the
		// replacement as it is: a '/' on one side only glues two names
		// together or doubles the slash, and the image still parses.
		case strings.HasSuffix(from, "/") && !strings.HasSuffix(to, "/"):
			add("%s: the prefix ends with '/' and its replacement %s does not, so %sNAME would become %sNAME: end both with '/' or neither",
				keyPath("spec.images", from), echo.Quote(to), echo.Short(from), echo.Short(to))
		case !strings.HasSuffix(from, "/") && strings.HasSuffix(to, "/"):
			add("%s: the replacement %s ends with '/' and the prefix does not, so %s/NAME would become %s/NAME: end both with '/' or neither",
				keyPath("spec.images", from), echo.Quote(to), echo.Short(from), echo.Short(to))
		}
	}
	for i, p := range s.Patches {
		if (p.Patch == "") == (p.Path == "") {
			add("spec.patches[%d]: exactly one of patch or path must be set", i)
		}
	}
	if s.UpgradeFrom != "" {
		// It becomes the bundle image's tag, or the catalog version (catalog
		// versions are semver: one exact version).
		if s.Catalog != "" {
			if _, err := mmsemver.StrictNewVersion(strings.TrimPrefix(s.UpgradeFrom, "v")); err != nil || strings.Contains(s.UpgradeFrom, "+") {
				add("spec.upgradeFrom %s: not a version: give the exact catalog version the cluster runs today, e.g. 1.2.3 or v1.2.3", echo.Quote(s.UpgradeFrom))
			}
		} else if t, err := name.NewTag("example.invalid/bundle:"+s.UpgradeFrom, name.StrictValidation); err != nil || t.TagStr() != s.UpgradeFrom {
			add("spec.upgradeFrom %s: not an image tag: give the tag of the bundle image the cluster runs today, e.g. 1.2.3 or v1.0 (letters, digits, '_', '.', '-', at most 128)", echo.Quote(s.UpgradeFrom))
		}
	}
	if msg := checkUpgradePolicy(s.UpgradeConstraintPolicy); msg != "" {
		add("spec.upgradeConstraintPolicy %s: %s", echo.Quote(s.UpgradeConstraintPolicy), msg)
	}
	for i, a := range s.ClusterAPIs {
		if msg := checkClusterAPI(a); msg != "" {
			add("spec.clusterAPIs[%d] %s: %s", i, echo.Quote(a), msg)
		}
	}
	if len(s.Accept) > MaxAcceptEntries {
		add("spec.accept: %d entries, at most %d: accept a whole category (\"openshift\") or use * globs (\"image:registry.redhat.io/*\")", len(s.Accept), MaxAcceptEntries)
	}
	for i, a := range s.Accept {
		if len(a) > MaxAcceptLength {
			// The entry itself is not quoted back: it may be huge.
			add("spec.accept[%d]: %d characters, at most %d: shorten it with * globs", i, len(a), MaxAcceptLength)
		} else if msg := checkAccept(a); msg != "" {
			add("spec.accept[%d] %s: %s", i, echo.Quote(a), msg)
		}
	}
	if len(s.Acknowledge) > MaxAcknowledgements {
		add("spec.acknowledge: %d entries, at most %d: an acknowledgement names one finding; fix the bundle instead when there are this many", len(s.Acknowledge), MaxAcknowledgements)
	} else {
		for i, a := range s.Acknowledge {
			if msg := checkAcknowledgement(a); msg != "" {
				add("spec.acknowledge[%d]: %s", i, msg)
			}
		}
	}
	w := s.SyncWaves.Effective()
	order := []struct {
		name string
		v    int
	}{{"crds", w.CRDs}, {"rbac", w.RBAC}, {"operator", w.Operator}, {"webhooks", w.Webhooks}, {"crs", w.CRs}}
	for i := 1; i < len(order); i++ {
		if order[i-1].v >= order[i].v {
			add("spec.syncWaves: %s (%d) must be lower than %s (%d): CRDs < RBAC < operator < webhooks < CRs",
				order[i-1].name, order[i-1].v, order[i].name, order[i].v)
		}
	}
	return errors.Join(errs...)
}

// checkUpgradePolicy returns "" for a value of upgradeConstraintPolicy
// ("" is the default), else why not: OLM v1's values are case-sensitive, so
// a near miss is named.
func checkUpgradePolicy(v string) string {
	switch v {
	case "", UpgradeCatalogProvided, UpgradeSelfCertified:
		return ""
	}
	msg := "not a policy: use CatalogProvided (the default: the upgrade must follow the catalog's, or the CSVs', replaces, skips or olm.skipRange) or SelfCertified (any version: you have checked the upgrade yourself), as OLM v1 spells them"
	for _, want := range []string{UpgradeCatalogProvided, UpgradeSelfCertified} {
		if len(v) <= 2*len(want) && editdist.Distance(strings.ToLower(v), strings.ToLower(want)) <= 3 {
			return msg + "; did you mean " + want + "?"
		}
	}
	return msg
}

// checkDigest returns "" for an image manifest digest (sha256: and 64
// hexadecimal digits, the form registries and `olm-cmp resolve` print),
// else why not.
func checkDigest(d string) string {
	if _, err := name.NewDigest("example.invalid/bundle@"+d, name.StrictValidation); err != nil || strings.Contains(d, "@") {
		return "not an image digest: write sha256: and 64 hexadecimal digits, as olm-cmp resolve prints it"
	}
	return ""
}

// refDigest is the digest of an image reference written with one
// (repo[:tag]@sha256:…), else "".
func refDigest(ref string) string {
	if _, d, ok := strings.Cut(ref, "@"); ok && !hasUserinfo(ref) {
		return d
	}
	return ""
}

// checkClusterAPI returns "" for "group/version" or "group", else why not.
func checkClusterAPI(a string) string {
	group, version, found := strings.Cut(a, "/")
	switch {
	case strings.TrimSpace(a) != a || a == "":
		return "empty or padded: use group/version (cert-manager.io/v1) or a group (cert-manager.io)"
	case found && (version == "" || strings.Contains(version, "/")):
		return "use group/version (cert-manager.io/v1) or a group alone"
	case found && dns1123Label(version) != "":
		return "not an API version: use group/version (cert-manager.io/v1) or a group alone; a list item indented deeper than the one above it is read as part of its value"
	case dns1123Subdomain(group) != "":
		return "not an API group: use group/version, e.g. monitoring.coreos.com/v1"
	case !strings.Contains(group, ".") && !slices.Contains(dotlessGroups, group):
		// A project's name ("cert-manager"), not its group: no CRD can
		// define a group without a dot, so the entry would declare nothing.
		return "not an API group: a CRD's group holds a dot (cert-manager.io, monitoring.coreos.com): use group/version, e.g. cert-manager.io/v1"
	}
	return ""
}

// dotlessGroups are Kubernetes' own API groups without a dot (and "v1",
// the core group as kubectl api-versions lists it): the only groups
// without one a cluster serves, since a CRD's group must hold a dot.
var dotlessGroups = []string{"v1", "core", "apps", "autoscaling", "batch", "policy", "extensions"}

// acceptCategories are the requirements report's categories (package
// requirements), which spec.accept entries name.
var acceptCategories = []string{"image", "api", "openshift", "certificates", "dependency", "signature", "*"}

// MaxAcceptEntries and MaxAcceptLength bound spec.accept: every entry is
// matched against every finding of every render, so a spec cannot make a
// render slow; real lists are a handful of short entries.
const (
	MaxAcceptEntries = 256
	MaxAcceptLength  = 256
)

// checkAccept returns "" for "category[:subject]", else why not.
func checkAccept(a string) string {
	c, subject, found := strings.Cut(a, ":")
	if !slices.Contains(acceptCategories, c) {
		return "use category:subject, the category one of image, api, openshift, certificates, dependency, signature (e.g. api:route.openshift.io)"
	}
	if found && strings.TrimSpace(subject) == "" {
		return "empty subject: name it, or use * for the whole category"
	}
	return ""
}

// Bounds of spec.acknowledge: each entry names one finding, which a person
// judged; the lengths fit the longest CRD name, version and JSON path real
// bundles have, with room.
const (
	MaxAcknowledgements   = 64
	MaxAcknowledgeReason  = 512
	maxAcknowledgeCRD     = 253
	maxAcknowledgeVersion = 63
	maxAcknowledgePath    = 1024
)

// checkAcknowledgement returns "" for a well-formed entry, else why not.
func checkAcknowledgement(a Acknowledgement) string {
	fields := []struct {
		name, v string
		max     int
	}{{"rule", a.Rule, 64}, {"crd", a.CRD, maxAcknowledgeCRD}, {"version", a.Version, maxAcknowledgeVersion}, {"path", a.Path, maxAcknowledgePath}, {"reason", a.Reason, MaxAcknowledgeReason}}
	for _, f := range fields {
		if len(f.v) > f.max {
			return fmt.Sprintf("%s: %d characters, at most %d", f.name, len(f.v), f.max)
		}
		if strings.ContainsFunc(f.v, unicode.IsControl) || strings.TrimSpace(f.v) != f.v {
			return fmt.Sprintf("%s %s: no control characters or leading or trailing spaces", f.name, echo.Quote(f.v))
		}
	}
	switch {
	case a.Rule == "":
		return "rule is missing: copy rule, crd, version and path from the finding (olm-cmp diff -o json prints them)"
	case !isRuleName(a.Rule):
		return fmt.Sprintf("rule %s: not a rule name: copy it from the finding, e.g. existingFieldRemoval", echo.Quote(a.Rule))
	case a.Reason == "":
		return fmt.Sprintf("%s: reason is missing: say why this finding is safe for your cluster (it is shown with the finding)", a)
	case a.Path != "" && !strings.HasPrefix(a.Path, "."):
		return fmt.Sprintf("path %s: a JSON path as the finding prints it, starting with '.', e.g. .status.conditions", echo.Quote(a.Path))
	}
	return ""
}

// isRuleName: a safety rule is one word of letters and digits
// (storedVersionRemoval, upgradeEdge).
func isRuleName(r string) bool {
	for i, c := range r {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return r != ""
}

// MaxExcludeFiles bounds spec.excludeFiles: a bundle with more broken files
// than this is not one to render.
const MaxExcludeFiles = 64

// checkExcludeFile returns "" for a file of a bundle's manifests/ named as
// the loader names it ("manifests/x.yaml"), else why not. Exact names only:
// a glob could skip the ClusterServiceVersion unnoticed.
func checkExcludeFile(f string) string {
	name, ok := strings.CutPrefix(f, "manifests/")
	switch {
	case !ok && strings.HasPrefix(path.Clean(f), "metadata/"):
		return "only files of the bundle's manifests/ directory can be skipped (a metadata/dependencies.yaml that does not parse is only a warning): remove the entry"
	case !ok:
		return "name a file of the bundle's manifests/ directory as errors name it, e.g. " + excludeFileExample(f)
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\"):
		return "name one file directly in manifests/ (a bundle has no subdirectories there), e.g. " + excludeFileExample(f)
	case strings.HasPrefix(name, "."):
		return "files starting with '.' are never read: remove the entry"
	case strings.ContainsAny(name, "*?[") || len(f) > 255:
		return "an exact file name, without globs and at most 255 characters"
	}
	return ""
}

// excludeFileExample is the entry f as errors name a file
// (manifests/NAME, from f's last element), or a made-up name when that
// element is not a plain file name: the example shows the user's own file.
func excludeFileExample(f string) string {
	base := path.Base(path.Clean(strings.ReplaceAll(f, "\\", "/")))
	plain := len(base) <= 100 && base != "" && base[0] != '.' && !strings.ContainsFunc(base, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-", r))
	})
	if !plain || base == "manifests" {
		base = "broken.yaml"
	}
	return "manifests/" + base
}

// MaxExtraManifestGlobs bounds each list of spec.extraManifests.
const MaxExtraManifestGlobs = 64

// checkExtraManifestGlob returns "" for a glob of file names at the top
// level of the source directory (where extra manifests are read), else why
// it cannot match one.
func checkExtraManifestGlob(g string) string {
	switch {
	case strings.TrimSpace(g) == "":
		return "empty: name a file beside olm-cmp.yaml, e.g. crs.yaml or *-cr.yaml"
	case len(g) > 255:
		return "at most 255 characters"
	case strings.ContainsAny(g, "/\\"):
		return "a file name without '/': extra manifests are read from the directory of olm-cmp.yaml only, not from subdirectories"
	case g == FileName:
		return FileName + " is the spec, never an extra manifest: remove the entry"
	}
	if _, err := path.Match(g, ""); err != nil {
		return "not a valid glob (use *, ? and [a-z])"
	}
	return ""
}

// truncate shortens s for quoting in a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ValidateSelector checks an exclude entry of the form [group/]Kind[/name].
func ValidateSelector(sel string) error {
	if strings.TrimSpace(sel) == "" {
		return errors.New("empty selector: use [group/]Kind[/name], e.g. ConsoleYAMLSample or console.openshift.io/*")
	}
	parts := strings.Split(sel, "/")
	if len(parts) > 3 {
		return fmt.Errorf("%s: too many '/': use [group/]Kind[/name]", echo.Quote(sel))
	}
	for _, p := range parts {
		if p == "" {
			return fmt.Errorf("%s: empty segment: use [group/]Kind[/name]", echo.Quote(sel))
		}
		if _, err := filepath.Match(p, ""); err != nil {
			return fmt.Errorf("%s: bad glob %s: %v", echo.Quote(sel), echo.Quote(p), err)
		}
	}
	return nil
}

// Normalized returns a canonical JSON encoding of the spec: two specs that
// render the same output encode the same (used as a cache key).
func (s *Spec) Normalized() []byte {
	c := *s
	c.WatchNamespaces = sortedSet(c.WatchNamespaces)
	c.ImagePullSecrets = sortedSet(c.ImagePullSecrets)
	c.ServiceAccounts = sortedSet(c.ServiceAccounts)
	c.Examples = sortedSet(c.Examples)
	c.ClusterAPIs = sortedSet(c.ClusterAPIs)
	c.Accept = sortedSet(c.Accept)
	c.ExcludeFiles = sortedSet(c.ExcludeFiles)
	if c.UpgradeConstraintPolicy == UpgradeCatalogProvided {
		c.UpgradeConstraintPolicy = "" // the default, written out
	}
	if em := c.ExtraManifests; em != nil {
		c.ExtraManifests = &ExtraManifests{Include: sortedSet(em.Include), Exclude: sortedSet(em.Exclude)}
	}
	if len(c.Acknowledge) > 0 {
		// A set too: the order of the entries changes nothing.
		c.Acknowledge = slices.Clone(c.Acknowledge)
		slices.SortFunc(c.Acknowledge, func(a, b Acknowledgement) int {
			return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.CRD, b.CRD), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Reason, b.Reason))
		})
		c.Acknowledge = slices.Compact(c.Acknowledge)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(c) // a Spec always encodes: it holds only JSON-safe types
	return buf.Bytes()
}

// sortedSet returns the distinct values of in, sorted, keeping "" (which in
// watchNamespaces means all namespaces): a set's order must not change the
// cache key.
func sortedSet(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// notFoundError says a source directory has no olm-cmp.yaml; it matches
// os.ErrNotExist with errors.Is.
type notFoundError struct{ dir string }

func (e notFoundError) Error() string {
	if near := nearSpecName(e.dir); near != "" {
		return fmt.Sprintf("%s not found in %s, but %s is there: rename it to %s (olm-cmp and its Argo CD plugin look for that name only)", FileName, e.dir, near, FileName)
	}
	return fmt.Sprintf("%s not found in %s: every olm-cmp source directory needs one (apiVersion: %s, kind: %s)", FileName, e.dir, APIVersion, Kind)
}

// nearSpecName returns the name of a file in dir that was probably meant as
// olm-cmp.yaml (olm-cmp.yml, OLM-CMP.yaml, olm_cmp.yaml), or "". One name,
// looked up by a bounded read of the directory. olm-cmp.yaml stays the one
// name: the plugin discovers applications by it (plugin.yaml), and two
// names would let a directory hold two specs.
func nearSpecName(dir string) string {
	f, err := os.Open(dir)
	if err != nil {
		return ""
	}
	defer f.Close()
	names, _ := f.Readdirnames(1024)
	slices.Sort(names)
	for _, n := range names {
		l := strings.ToLower(strings.ReplaceAll(n, "_", "-"))
		if l == "olm-cmp.yml" || l == FileName || l == "olmcmp.yaml" || l == "olmcmp.yml" {
			return n
		}
	}
	return ""
}

func (notFoundError) Unwrap() error { return os.ErrNotExist }
