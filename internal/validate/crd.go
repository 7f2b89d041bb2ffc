package validate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/transform"
)

// crdVerdictEntries bounds the cache of CRD verdicts: a verdict is a few
// short lines, and a sidecar serving many applications sees a few hundred
// distinct CRDs at most.
const crdVerdictEntries = 1024

var (
	// crdVerdicts holds each CRD's problems (nil: none) by crdKey, the
	// SHA-256 of what they depend on. The API server's CRD validation compiles every CEL
	// rule and estimates its cost, which for a bundle of large CRDs is most
	// of the validate step; a sidecar re-rendering the same bundle, or
	// another bundle shipping the same CRD, pays it once.
	crdVerdicts, _ = lru.New[[sha256.Size]byte, []string](crdVerdictEntries)
	// crdChecks shares one check of a CRD between concurrent renders.
	crdChecks singleflight.Group
)

// crdVerdict checks the render's CRD e as kube-apiserver checks one on
// create (the CRD registry's PrepareForCreate, then
// ValidateCustomResourceDefinition): versions (at least one, unique names,
// exactly one storage version, a schema for each), structural schemas,
// defaults valid against their schema and already pruned, list types,
// x-kubernetes-validations rules compiled as CEL with their cost estimated,
// conversion (a Webhook strategy needs its webhook), names, subresources,
// printer columns, selectable fields, and the API approval annotation of a
// *.k8s.io group. Its other metadata is checked by crdProblems with the
// rest of the package's rules, so those field errors are left out here.
// The verdict is kept in e for the render and cached by crdKey across
// renders; a CRD decoded here is kept in e for its custom resources.
func (v *validator) crdVerdict(e *crdEntry) ([]string, error) {
	return v.crdScratch.verdict(e)
}

// crdScratch is one checker's buffers.
type crdScratch struct {
	json    transform.JSONWriter
	hashBuf []byte
}

// checkCRDs judges the render's CRDs before its objects, several at once:
// a cold check of a bundle's large CRDs (their CEL rules) is most of the
// step's time, and each CRD's is its own. Verdicts are kept in each entry,
// so the result does not depend on the order they finish in. A CRD not
// yet begun when ctx ends is not begun: the step returns ctx's cause.
func (v *validator) checkCRDs(ctx context.Context) error {
	var todo []*crdEntry
	for _, e := range v.byNode {
		if !e.checked {
			todo = append(todo, e)
		}
	}
	if len(todo) < 2 {
		return nil
	}
	workers := min(goruntime.GOMAXPROCS(0), len(todo))
	// One scratch per worker: the errgroup never runs more at once.
	scratches := make(chan *crdScratch, workers)
	scratches <- &v.crdScratch
	for range workers - 1 {
		scratches <- &crdScratch{}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, e := range todo {
		g.Go(func() error {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			s := <-scratches
			defer func() { scratches <- s }()
			_, err := s.verdict(e)
			return err
		})
	}
	return g.Wait()
}

func (s *crdScratch) verdict(e *crdEntry) ([]string, error) {
	if !e.checked {
		problems, err := s.crdDefinitionProblems(e.node, e)
		if err != nil {
			return nil, err
		}
		e.checked, e.problems = true, problems
	}
	return e.problems, nil
}

func (s *crdScratch) crdDefinitionProblems(n *yaml.RNode, e *crdEntry) ([]string, error) {
	// data is the CRD's JSON once written: the key of a CRD with an alias
	// hashes it, and a check on a miss reuses it rather than writing it again.
	var data []byte
	key, ok := s.crdKey(n)
	if !ok {
		var err error
		if data, err = s.json.Object(n); err != nil {
			return nil, err
		}
		key = sha256.Sum256(data)
	}
	if problems, ok := crdVerdicts.Get(key); ok {
		return problems, nil
	}
	res, err, _ := crdChecks.Do(hex.EncodeToString(key[:]), func() (any, error) {
		if problems, ok := crdVerdicts.Get(key); ok {
			return problems, nil
		}
		if problems, ok := loadVerdict(key); ok {
			crdVerdicts.Add(key, problems)
			return problems, nil
		}
		if data == nil {
			var err error
			if data, err = s.json.Object(n); err != nil {
				return nil, err
			}
		}
		problems := checkCRD(data, e)
		crdVerdicts.Add(key, problems)
		storeVerdict(key, problems)
		return problems, nil
	})
	if err != nil {
		return nil, err
	}
	return res.([]string), nil
}

// crdKey is the SHA-256 of what a CRD's verdict depends on: its apiVersion,
// its spec and its API approval annotation (metadata is otherwise checked
// outside the cache, and the annotations olm-cmp adds differ from render
// to render of one CRD). It hashes the nodes themselves, a quarter of the
// cost of writing the CRD as JSON; false when a node is an alias (the
// caller hashes the JSON instead).
func (s *crdScratch) crdKey(n *yaml.RNode) (key [sha256.Size]byte, ok bool) {
	h := sha256.New()
	if s.hashBuf == nil {
		s.hashBuf = make([]byte, 0, 64<<10) // hashNode flushes at 32 KiB
	}
	b := appendString(s.hashBuf[:0], n.GetApiVersion())
	defer func() { s.hashBuf = b[:0] }() // grown once per render, not per CRD
	approval, approved := n.GetAnnotations()[apiextensionsv1beta1.KubeAPIApprovedAnnotation]
	if approved {
		b = appendString(append(b, 1), approval)
	} else {
		b = append(b, 0)
	}
	var spec *yaml.Node
	if f := n.Field("spec"); f != nil {
		spec = f.Value.YNode()
	}
	if b, ok = hashNode(h, b, spec); !ok {
		return key, false
	}
	h.Write(b)
	h.Sum(key[:0])
	return key, true
}

// hashNode writes y into h through the buffer b (flushed when large): its
// kind, style, tag and value, each length-prefixed, and its children. These
// are everything the CRD's JSON is written from.
func hashNode(h hash.Hash, b []byte, y *yaml.Node) ([]byte, bool) {
	if y == nil {
		return append(b, 0), true
	}
	if y.Kind == yaml.AliasNode {
		return b, false
	}
	b = append(b, byte(y.Kind), byte(y.Style))
	b = appendString(b, y.Tag)
	b = appendString(b, y.Value)
	b = binary.AppendUvarint(b, uint64(len(y.Content)))
	if len(b) > 32<<10 {
		h.Write(b)
		b = b[:0]
	}
	for _, c := range y.Content {
		var ok bool
		if b, ok = hashNode(h, b, c); !ok {
			return b, false
		}
	}
	return b, true
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// MaxRuleNodes bounds the x-kubernetes-validations rules of one CRD (all
// versions, every schema node's rules counted): compiling them is most of a
// CRD's check (sail-operator's bundle, the corpus' largest, has 399 rules
// on 346 nodes in all its CRDs; 5000 take seconds). Rules, not nodes: one
// node may carry any number of them, each compiled. A CRD over it is
// refused unchecked.
const MaxRuleNodes = 5000

// ruleNodes counts crd's x-kubernetes-validations rules, stopping past
// MaxRuleNodes.
func ruleNodes(crd *apiextensionsv1.CustomResourceDefinition) int {
	n := 0
	var walk func(s *apiextensionsv1.JSONSchemaProps)
	walk = func(s *apiextensionsv1.JSONSchemaProps) {
		if s == nil || n > MaxRuleNodes {
			return
		}
		n += len(s.XValidations)
		for _, m := range []map[string]apiextensionsv1.JSONSchemaProps{s.Properties, s.PatternProperties, s.Definitions} {
			for _, c := range m {
				walk(&c)
			}
		}
		for _, l := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
			for i := range l {
				walk(&l[i])
			}
		}
		walk(s.Not)
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Schema)
		}
		if s.AdditionalItems != nil {
			walk(s.AdditionalItems.Schema)
		}
		if s.Items != nil {
			walk(s.Items.Schema)
			for i := range s.Items.JSONSchemas {
				walk(&s.Items.JSONSchemas[i])
			}
		}
		for _, d := range s.Dependencies {
			walk(d.Schema)
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil {
			walk(v.Schema.OpenAPIV3Schema)
		}
	}
	return n
}

// approvalField is where the server reports a *.k8s.io or *.kubernetes.io
// group's missing API approval, the one metadata problem left to
// ValidateCustomResourceDefinition (crdProblems checks the rest).
var approvalField = field.NewPath("metadata", "annotations").Key(apiextensionsv1beta1.KubeAPIApprovedAnnotation).String()

// checkCRD runs the API server's CRD validation on data.
func checkCRD(data []byte, e *crdEntry) (problems []string) {
	// The server's code runs on a schema a bundle wrote: should it fail on
	// one, the render says so instead of stopping the process.
	defer func() {
		if r := recover(); r != nil {
			problems = []string{fmt.Sprintf("could not be checked as the API server checks a CustomResourceDefinition (%v); report this to olm-cmp", r)}
		}
	}()
	obj, _, err := decoder().Decode(data, nil, nil)
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		if runtime.IsNotRegisteredError(err) {
			// apiextensions.k8s.io/v1beta1, gone since Kubernetes 1.22.
			return []string{"apiVersion: the API server serves CustomResourceDefinitions as apiextensions.k8s.io/v1 only"}
		}
		if err != nil {
			return decodeProblems(err)
		}
		return []string{"not a CustomResourceDefinition"}
	}
	if err != nil {
		// A field the live form let through (a duplicate key): the
		// server refuses the CRD before validating it.
		return decodeProblems(err)
	}
	if n := ruleNodes(crd); n > MaxRuleNodes {
		return []string{fmt.Sprintf("spec.versions: %d x-kubernetes-validations rules or more, over the %d olm-cmp checks in one CRD (the API server compiles each in a CEL environment of its schema node, about a millisecond apiece)", n, MaxRuleNodes)}
	}
	if e != nil && e.typed == nil {
		// Kept for the render's custom resources of this CRD: what the
		// server's defaults below add (names, conversion, stored
		// versions) is nothing their schemas read.
		e.typed = crd
	}
	// What the server does to a CRD it is asked to create, before its
	// validation: v1's defaults (the decoder applies them), conversion to
	// the internal version, then the registry strategy's PrepareForCreate
	// (status cleared, storedVersions the storage version, generation 1).
	scheme().Default(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return []string{"not a valid CustomResourceDefinition: " + err.Error()}
	}
	internal.Status = apiextensions.CustomResourceDefinitionStatus{}
	internal.Generation = 1
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = []string{v.Name}
			break
		}
	}
	var errs field.ErrorList
	for _, fe := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal) {
		// status is the server's own (PrepareForCreate): a problem there
		// repeats one of spec.versions.
		if meta := strings.HasPrefix(fe.Field, "metadata."); (!meta || fe.Field == approvalField) && !strings.HasPrefix(fe.Field, "status.") {
			errs = append(errs, fe)
		}
	}
	problems = crdFieldProblems(errs, crd)
	// The server reports some problems in the order of a map's keys
	// (schema properties): sorted, the line is the same on every render.
	slices.Sort(problems)
	return slices.Compact(problems)
}

// crdFieldProblems writes the CRD validation's field errors as the rest of
// the package writes field errors, pointing where a reader of the CRD's
// file looks and saying what a Go value would have said.
func crdFieldProblems(errs field.ErrorList, crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, e := range errs {
		e.Field = fileField(e.Field, crd)
		switch bad := e.BadValue.(type) {
		case apiextensions.ValidationRule:
			e.BadValue = bad.Rule
		case []apiextensions.CustomResourceDefinitionVersion:
			// "must contain unique version names", "must have exactly one
			// version marked as storage version": the names say which.
			out = append(out, e.Field+": "+e.Detail+" ("+versionsSummary(bad)+")")
			continue
		}
		e.Detail = celDetail(e.Detail)
		out = append(out, fieldProblems(field.ErrorList{e})...)
	}
	return out
}

// fileField turns a path of the server's internal form of a CRD into one
// of the v1 form the file holds. The internal form keeps a schema, the
// subresources, printer columns or selectable fields that every version
// shares once, under spec (spec.validation for the schema); the file has
// them in each version.
func fileField(f string, crd *apiextensionsv1.CustomResourceDefinition) string {
	versions := "spec.versions[*]" // identical in every version
	if len(crd.Spec.Versions) == 1 {
		versions = "spec.versions[0]"
	}
	for _, moved := range [][2]string{
		{"spec.validation", ".schema"},
		{"spec.subresources", ".subresources"},
		{"spec.additionalPrinterColumns", ".additionalPrinterColumns"},
		{"spec.selectableFields", ".selectableFields"},
	} {
		if rest, ok := cutField(f, moved[0]); ok {
			return versions + moved[1] + rest
		}
	}
	// The internal form flattens spec.conversion.webhook.
	for _, moved := range [][2]string{
		{"spec.conversion.webhookClientConfig", "spec.conversion.webhook.clientConfig"},
		{"spec.conversion.conversionReviewVersions", "spec.conversion.webhook.conversionReviewVersions"},
	} {
		if rest, ok := cutField(f, moved[0]); ok {
			return moved[1] + rest
		}
	}
	return f
}

// cutField cuts the path prefix from f, at a field's boundary.
func cutField(f, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(f, prefix)
	return rest, ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// versionsSummary says which versions a CRD has, and which are storage
// versions, in the words of the file.
func versionsSummary(versions []apiextensions.CustomResourceDefinitionVersion) string {
	var names, storage []string
	for _, v := range versions {
		names = append(names, echo.Quote(v.Name))
		if v.Storage {
			storage = append(storage, echo.Quote(v.Name))
		}
	}
	s := "it has " + strings.Join(names, ", ")
	if len(storage) == 0 {
		return s + ", none of them with storage: true"
	}
	return s + ", storage: true on " + strings.Join(storage, " and ")
}

// celIssue is one problem of CEL's compiler: `ERROR: <input>:1:14: Syntax
// error: …`, followed by lines that draw the rule and a caret.
var celIssue = regexp.MustCompile(`^ERROR: <input>:(\d+):(\d+): (.*)$`)

// celDetail turns a CEL compilation failure, several lines of which only
// the first says what is wrong, into one line with the rule's line and
// column in words; other details pass unchanged but on one line.
func celDetail(d string) string {
	for _, prefix := range []string{"compilation failed: ", "messageExpression compilation failed: "} {
		rest, ok := strings.CutPrefix(d, prefix)
		if !ok {
			continue
		}
		lines := strings.Split(rest, "\n")
		var issues []string
		for _, l := range lines {
			if m := celIssue.FindStringSubmatch(l); m != nil {
				issues = append(issues, fmt.Sprintf("%s (line %s, column %s)", m[3], m[1], m[2]))
			}
		}
		if len(issues) == 0 {
			break
		}
		what := "not a valid CEL expression: "
		if strings.HasPrefix(prefix, "messageExpression") {
			what = "messageExpression is not a valid CEL expression: "
		}
		if len(issues) > 1 {
			issues = append(issues[:1], fmt.Sprintf("and %d more", len(issues)-1))
		}
		return what + strings.Join(issues, "; ")
	}
	if strings.ContainsAny(d, "\r\n") {
		return strings.Join(strings.Fields(d), " ")
	}
	return d
}

// crdFix says where the fix for a CRD's problem is: a CRD of the bundle
// cannot be repaired by the user (OLM installs it as the vendor wrote it,
// and upgrades are judged against it; leaving it out leaves the operator
// without its API), so the fix is another bundle version or the vendor;
// one from the user's own file (an extra manifest: a Where without the
// caller's Fix for a vendor's file) is the user's to fix.
func crdFix(o Origin) string {
	if o.Where != "" && o.Fix == "" {
		return "fix " + o.Where
	}
	return "the bundle ships this CustomResourceDefinition as its vendor wrote it: use another version of the bundle or ask the vendor to fix it (if a spec.patches entry changes the CRD, fix that entry)"
}
