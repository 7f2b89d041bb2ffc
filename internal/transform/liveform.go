package transform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/jsonfields"
)

// liveFormFilter leaves out of the render what the cluster would not keep.
type liveFormFilter struct{ warn func(string) }

// LiveForm removes the fields that the live object will never have, so that
// comparing the render with the cluster (Argo CD's diff) finds them equal
// after a sync. Argo CD 3.x compares a CustomResourceDefinition as plain data
// (apiextensions is not among the types it knows), so a field the API server
// drops on write keeps the Application OutOfSync forever. Three cases:
//
//   - CustomResourceDefinitions (apiextensions.k8s.io/v1): keys holding an
//     empty value (false, 0, "", null, {} or []) that the typed
//     apiextensions.k8s.io/v1 object leaves out when it is encoded — e.g.
//     spec.preserveUnknownFields: false, properties: {}, nullable: false,
//     metadata.creationTimestamp: null; and every key the type does not
//     have, whatever it holds (openebs 3.0.0's v1beta1 spec.version,
//     windup-operator's misplaced spec.status), with a warning naming them.
//     The API server stores a CRD through that type, and OLM v1 decodes
//     bundle CRDs into it, so this is also what OLM v1 produces. Everything
//     else stays, preserveUnknownFields: true included (kept by the server
//     where it is allowed, refused with its own message where it is not), and
//     so does a value of the wrong type (the validate step names it).
//   - Objects of a kind that a CRD of the render defines as cluster-scoped:
//     their metadata.namespace, which the API server ignores.
//   - ClusterRoles with an aggregationRule: their rules. Kubernetes'
//     aggregation controller owns them and overwrites whatever was applied,
//     so rendered rules never match; non-empty ones are dropped with a
//     warning, since they would never have been granted.
//
// Nothing else is touched: key order, comments and styles of what stays are
// kept.
func LiveForm(warn func(string)) kio.Filter { return liveFormFilter{warn} }

func (f liveFormFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	clusterScoped := clusterScopedKinds(nodes)
	for _, n := range nodes {
		var err error
		switch {
		case clusterScoped[gkOf(n)] && n.GetNamespace() != "":
			err = setNamespace(n, "")
		case gkOf(n) == groupKind{groupAPIExtensions, "CustomResourceDefinition"} && n.GetApiVersion() == "apiextensions.k8s.io/v1":
			err = dropUnstoredCRDFields(n, f.warn)
		case gkOf(n) == groupKind{groupRBAC, "ClusterRole"}:
			err = f.dropAggregatedRules(n)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", describe(n), err)
		}
	}
	return nodes, nil
}

// clusterScopedKinds are the kinds that a CRD of the render defines with
// scope Cluster. The API server ignores metadata.namespace on their objects
// (alm-examples set one: kubevirt's AAQ and CDI), and Argo CD tracks them
// without one, so the render drops it too.
func clusterScopedKinds(nodes []*yaml.RNode) map[groupKind]bool {
	out := map[groupKind]bool{}
	for _, n := range nodes {
		if !isCRD(n) {
			continue
		}
		group, _ := n.GetString("spec.group")
		kind, _ := n.GetString("spec.names.kind")
		if scope, _ := n.GetString("spec.scope"); scope == "Cluster" && kind != "" {
			out[groupKind{group, kind}] = true
		}
	}
	return out
}

// dropAggregatedRules removes rules from a ClusterRole that has an
// aggregationRule.
func (f liveFormFilter) dropAggregatedRules(n *yaml.RNode) error {
	agg, err := n.Pipe(yaml.Lookup("aggregationRule"))
	if err != nil {
		return err
	}
	if agg == nil || agg.IsNilOrEmpty() {
		return nil
	}
	rules, err := n.Pipe(yaml.Lookup("rules"))
	if err != nil || rules == nil {
		return err
	}
	if !rules.IsNilOrEmpty() {
		warnf(f.warn, "%s: dropped its rules: it has an aggregationRule, so Kubernetes replaces its rules with those of the ClusterRoles it selects", describe(n))
	}
	return n.PipeE(yaml.Clear("rules"))
}

// dropUnstoredCRDFields removes from the CRD n every key that
// apiextensions.k8s.io/v1's Go type does not encode: the keys encoding/json
// does not know, and the empty ones it leaves out under omitempty/omitzero.
// The node is walked along the type (no decoding: multi-megabyte CRDs would
// cost more than the rest of the render), reading each value as the Argo CD
// repo-server reads the printed YAML. Tests check the result against a real
// decode and encode through the type. Unknown keys that held something are
// named in one warning: they may be a typo the author wants to know about.
func dropUnstoredCRDFields(n *yaml.RNode, warn func(string)) error {
	tw := &typeWalker{}
	if err := tw.walk(n.YNode(), crdType); err != nil {
		return err
	}
	if len(tw.unknown) > 0 {
		warnf(warn, "%s: dropped %s, which apiextensions.k8s.io/v1 does not have (the API server and OLM v1 drop it too; if you wrote this CRD, check the field's name and place)", describe(n), quoteList(tw.unknown, 5))
	}
	return nil
}

// quoteList writes at most max items, then how many more there are.
func quoteList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

var (
	crdType         = reflect.TypeFor[apiextensionsv1.CustomResourceDefinition]()
	schemaPropsType = reflect.TypeFor[apiextensionsv1.JSONSchemaProps]()
	// Types with their own JSON encoding:
	rawJSONType       = reflect.TypeFor[apiextensionsv1.JSON]()                         // defaults, examples, enums: data, not fields
	orBoolType        = reflect.TypeFor[apiextensionsv1.JSONSchemaPropsOrBool]()        // a schema or true/false
	orArrayType       = reflect.TypeFor[apiextensionsv1.JSONSchemaPropsOrArray]()       // a schema or a list of schemas
	orStringArrayType = reflect.TypeFor[apiextensionsv1.JSONSchemaPropsOrStringArray]() // a schema or a list of names
	timeType          = reflect.TypeFor[metav1.Time]()                                  // a timestamp string or null
)

// typeWalker walks YAML along a Go type. Its jsonWriter only remembers which
// plain scalars YAML 1.1 reads as something else than a string; path is
// where the walk is, unknown the paths of the unknown keys it dropped that
// held something.
type typeWalker struct {
	w       jsonWriter
	path    []pathSeg
	unknown []string
	// selfDecoding caches decodesItself: a CRD walks the few schema types
	// once per node, and asking reflect each time was a third of the walk.
	selfDecoding map[reflect.Type]bool
}

// decodesItself says whether *t implements json.Unmarshaler.
func (tw *typeWalker) decodesItself(t reflect.Type) bool {
	d, ok := tw.selfDecoding[t]
	if !ok {
		if tw.selfDecoding == nil {
			tw.selfDecoding = map[reflect.Type]bool{}
		}
		d = reflect.PointerTo(t).Implements(jsonUnmarshaler)
		tw.selfDecoding[t] = d
	}
	return d
}

// pathSeg is a key, or an index when key is "".
type pathSeg struct {
	key string
	idx int
}

// at writes the path of the walk, plus key: spec.versions[0].name.
func (tw *typeWalker) at(key string) string {
	var b strings.Builder
	for _, s := range tw.path {
		if s.key == "" {
			b.WriteString("[" + strconv.Itoa(s.idx) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}

// jsonUnmarshaler types decode themselves: their YAML is data, not fields.
var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

func (tw *typeWalker) walk(n *yaml.Node, t reflect.Type) error {
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case rawJSONType, timeType:
		return nil
	case orBoolType, orStringArrayType:
		if n.Kind == yaml.MappingNode {
			return tw.walk(n, schemaPropsType)
		}
		return nil
	case orArrayType:
		switch n.Kind {
		case yaml.MappingNode:
			return tw.walk(n, schemaPropsType)
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if err := tw.walk(c, schemaPropsType); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if tw.decodesItself(t) {
		return nil // e.g. metav1.FieldsV1: its own encoding, not its Go fields
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := jsonfields.Of(t)
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, known := fields[k.Value]
			if !known {
				// encoding/json never decodes it: the typed object has no trace of it.
				if empty, err := tw.isEmpty(v); err != nil {
					return err
				} else if !empty {
					tw.unknown = append(tw.unknown, tw.at(k.Value))
				}
				continue
			}
			drop, err := tw.dropped(f, v)
			if err != nil {
				return err
			}
			if drop {
				continue
			}
			tw.path = append(tw.path, pathSeg{key: k.Value})
			err = tw.walk(v, f.Type)
			tw.path = tw.path[:len(tw.path)-1]
			if err != nil {
				return err
			}
			kept = append(kept, k, v)
		}
		n.Content = kept
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			tw.path = append(tw.path, pathSeg{idx: i})
			err := tw.walk(c, t.Elem())
			tw.path = tw.path[:len(tw.path)-1]
			if err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		// Map entries are data: encoding/json keeps them all, empty or not.
		for i := 1; i < len(n.Content); i += 2 {
			tw.path = append(tw.path, pathSeg{key: n.Content[i-1].Value})
			err := tw.walk(n.Content[i], t.Elem())
			tw.path = tw.path[:len(tw.path)-1]
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// isEmpty reports whether v reads as null, false, 0, "", {} or [].
func (tw *typeWalker) isEmpty(v *yaml.Node) (bool, error) {
	val, err := tw.read(v)
	return err == nil && val.empty, err
}

// dropped says whether encoding/json leaves the struct field f out once v is
// decoded into it: only under omitempty when empty, or omitzero when zero.
func (tw *typeWalker) dropped(f jsonfields.Field, v *yaml.Node) (bool, error) {
	val, err := tw.read(v)
	if err != nil {
		return false, err
	}
	if !val.empty {
		return false, nil
	}
	t := f.Type
	isNull := val.kind == readNull
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		// A pointer is nil only when the value is null: `x: false` into *bool
		// is a pointer to false, which omitempty keeps.
		return isNull && (f.OmitEmpty || f.OmitZero), nil
	case reflect.Map, reflect.Slice:
		// {} or [] decodes to an empty non-nil value: omitempty drops it,
		// omitzero only drops nil.
		return f.OmitEmpty || (f.OmitZero && isNull), nil
	case reflect.Struct:
		// omitempty never drops a struct; omitzero drops the zero value,
		// which null decodes to.
		return f.OmitZero && isNull, nil
	case reflect.String:
		return (f.OmitEmpty || f.OmitZero) && (isNull || val.kind == readString), nil
	case reflect.Bool:
		return (f.OmitEmpty || f.OmitZero) && (isNull || val.kind == readBool), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return (f.OmitEmpty || f.OmitZero) && (isNull || val.kind == readNumber), nil
	}
	return false, nil
}

// readKind is the JSON kind of a value as the repo-server reads it.
type readKind uint8

const (
	readNull readKind = iota
	readBool
	readNumber
	readString
	readMap
	readList
	readOther
)

// readValue is what dropped needs of a value the repo-server reads: its
// kind, and whether it is null, false, 0, "", {} or [] (a value, not an
// interface holding a map or a string: read runs for every key of a CRD,
// and boxing its answer was most of the walk's allocations).
type readValue struct {
	kind  readKind
	empty bool
}

// read returns v as the repo-server reads it, far enough to tell whether it
// is empty and of which kind. Scalars are read as the printer will write
// them (printedAs); the few whose reading under YAML 1.1 differs are
// printed and converted the way the repo-server does.
func (tw *typeWalker) read(v *yaml.Node) (readValue, error) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		return readValue{readMap, len(v.Content) == 0}, nil
	case yaml.SequenceNode:
		return readValue{readList, len(v.Content) == 0}, nil
	case yaml.ScalarNode:
	default:
		return readValue{kind: readOther}, nil
	}
	tag, quoted, explicit := printedAs(v)
	switch {
	case explicit:
	case quoted && tag == yaml.NodeTagString:
		return readValue{readString, v.Value == ""}, nil
	case quoted:
	case tag == yaml.NodeTagNull:
		return readValue{readNull, true}, nil
	case tag == yaml.NodeTagBool && (v.Value == "true" || v.Value == "false"):
		return readValue{readBool, v.Value == "false"}, nil
	case (tag == yaml.NodeTagInt || tag == yaml.NodeTagFloat) && jsonNumber().MatchString(v.Value):
		return readValue{readNumber, isZeroNumber(v.Value)}, nil
	case tag == yaml.NodeTagString && !tw.w.yaml11NonString(v.Value):
		return readValue{readString, v.Value == ""}, nil
	}
	val, err := readPrinted(v)
	return valueOf(val), err
}

// readPrinted prints the scalar v and reads it back as the repo-server does
// (sigs.k8s.io/yaml, YAML 1.1).
func readPrinted(v *yaml.Node) (any, error) {
	printed, err := yaml.NewRNode(v).String()
	if err != nil {
		return nil, err
	}
	js, err := k8syaml.YAMLToJSON([]byte(printed))
	if err != nil {
		return nil, err
	}
	var val any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&val); err != nil {
		return nil, err
	}
	return val, nil
}

// valueOf is the readValue of v, decoded from JSON with UseNumber.
func valueOf(v any) readValue {
	switch t := v.(type) {
	case nil:
		return readValue{readNull, true}
	case bool:
		return readValue{readBool, !t}
	case string:
		return readValue{readString, t == ""}
	case json.Number:
		return readValue{readNumber, isZeroNumber(t.String())}
	case map[string]any:
		return readValue{readMap, len(t) == 0}
	case []any:
		return readValue{readList, len(t) == 0}
	}
	return readValue{kind: readOther}
}

// isZeroNumber reports whether the JSON number s is 0.
func isZeroNumber(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == 0
}
