// Package validate checks every object a render emits as the API server
// would check it on create, so that an object the server would refuse, or
// silently change, never leaves the renderer:
//
//   - metadata (name, generateName, namespace, labels, annotations, owner
//     references, finalizers) with apimachinery's own ObjectMeta validation
//     and the name rule of the object's kind (fieldtext);
//   - names, generateNames and namespaces holding a control character are
//     refused whatever the kind (a newline ends a markdown row in `diff`);
//   - objects of a built-in kind (of the versions scheme registers) are
//     decoded strictly into their k8s.io/api type by apimachinery's JSON
//     serializer, as the server decodes a request
//     with fieldValidation=Strict (kubectl's and Argo CD's default): an
//     unknown or duplicate field, or a value of the wrong type, is an error;
//     the labels and annotations inside them (pod and claim templates, label
//     selectors, nodeSelector) are checked as labels (nested.go);
//   - custom resources whose CustomResourceDefinition the same render ships
//     go through the server's own CR handling (apiextensions-apiserver):
//     pruning against the version's structural schema (a pruned field is an
//     error), defaulting, the status dropped when the version has the
//     status subresource (the server drops it on create, silently), then
//     the schema validator (a missing required field, a wrong type, an
//     enum or pattern mismatch are errors), and what the server's strategy
//     checks beside it: embedded resources (x-kubernetes-embedded-resource:
//     apiVersion, kind, metadata), duplicate items of set and map lists,
//     and the CRD's x-kubernetes-validations rules, run as the strategy
//     runs them on create (no oldSelf, the server's cost budgets, none on
//     an object already refused for its shape), a failure worded as the
//     server words it (the field, the rule or its message). A custom
//     resource of a CRD the render does not ship is checked for metadata
//     only: its schema is the cluster's business; nor is one of a CRD the
//     server would refuse;
//   - CustomResourceDefinitions as the server checks one on create, with
//     apiextensions-apiserver's own validation: versions and storage,
//     schemas present and structural, defaults, CEL rules compiled and
//     their cost estimated, conversion (crd.go);
//   - what the server's validation of a kind checks beyond its schema, for
//     the kinds bundles ship (kinds.go): a Deployment's selector against
//     its template's labels and its pod template, a Service's ports,
//     admission webhooks' sideEffects, admissionReviewVersions and
//     timeoutSeconds and client configs, RBAC rules and bindings, ConfigMap
//     and Secret keys.
//
// The checks that need the API server's own libraries (CRDs, custom
// resources against their CRD, webhooks' client configs) run in
// olm-cmp-check (internal/validate/apicheck, through internal/checkproc),
// planned and cached by content (verdicts.go): one process per render that
// meets something not yet checked, none for a render that does not. The
// verdicts of built-in objects, checked in process, are kept so too
// (builtins.go): a warm render decodes none of them.
//
// Not checked: the rest of the per-kind rules (a pod's security context,
// volumes' sources, …).
package validate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/transform"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// maxObjectLines and maxProblems bound the error: one line per invalid
// object, a few problems each.
const (
	maxObjectLines = 10
	maxProblems    = 3
)

// Objects returns the filter that validates every object it sees and
// passes them on unchanged, or fails with one line per invalid object (the
// object, its problems, the fix), at most maxObjectLines of them. Each
// run has its own cache of compiled CRD schemas: a render compiles each
// served version it needs once. origin, when not nil, says where an object
// came from (the zero Origin when it cannot say), so its line says which
// file to fix, or how to do without it.
func Objects(ctx context.Context, origin func(*yaml.RNode) Origin) kio.Filter {
	return filter{ctx, origin}
}

// Origin is what the caller knows of where an object came from, for the
// object's error line: validate itself knows only what the object says.
// Where names the source ("the extra manifest cm.yaml"); Fix, when set, is
// the fix the line offers instead of validate's own, worded by the caller
// for that source (a vendor's bundle file cannot be fixed, only left out).
type Origin struct{ Where, Fix string }

type filter struct {
	// ctx is the render's: olm-cmp-check, which checks what the render
	// has no verdict for (compiling CRDs' CEL rules), is stopped at its
	// deadline.
	ctx    context.Context
	origin func(*yaml.RNode) Origin
}

func (f filter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	v := newValidator(f.ctx, nodes)
	v.origin = f.origin
	if err := v.plan(nodes); err != nil {
		return nil, err
	}
	var lines []string
	invalid := 0
	for _, n := range nodes {
		line, err := v.object(n)
		if err != nil {
			return nil, err
		}
		if line == "" {
			continue
		}
		invalid++
		if len(lines) < maxObjectLines {
			lines = append(lines, line)
		}
	}
	v.keepBuiltins()
	if invalid == 0 {
		return nodes, nil
	}
	if invalid > len(lines) {
		lines = append(lines, fmt.Sprintf("and %d more invalid objects", invalid-len(lines)))
	}
	return nil, errors.New(strings.Join(lines, "\n"))
}

// scheme knows the built-in API versions a render holds: what OLM's
// conversion emits, every built-in kind a bundle may ship (operator-registry's
// supported kinds), and what extra manifests commonly add (Jobs,
// autoscalers). Objects of other built-in versions are checked for metadata
// only: registering every group (client-go's scheme) would add 5 MB of code
// and a third of the start-up time of every olm-cmp process.
//
// Both are built on first use, not at package initialisation: every olm-cmp
// process links this package, and only renders use them (the scheme's
// registration was 0.2 MB and half a millisecond of every process's start).
var (
	scheme  = sync.OnceValue(newScheme)
	decoder = sync.OnceValue(func() *jsonserializer.Serializer {
		return jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, scheme(), scheme(), jsonserializer.SerializerOptions{Strict: true})
	})
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme,
		admissionregistrationv1.AddToScheme, apiextensionsv1.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme, schedulingv1.AddToScheme,
		batchv1.AddToScheme, autoscalingv2.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // static registration: cannot fail at run time
		}
	}
	return s
}

// validator holds one render's CRDs and verdicts.
type validator struct {
	ctx  context.Context
	crds map[schema.GroupKind]*crdEntry
	// json writes the objects as the plugin sends them; crdJSON the CRDs a
	// custom resource needs while json's bytes of that resource are in use.
	json, crdJSON transform.JSONWriter
	// origin says where an object came from (see Objects).
	origin func(*yaml.RNode) Origin
	// crdScratch is crdKey's buffer.
	crdScratch crdScratch
	// byNode is the entry of every CRD of the render, crds' and any second
	// CRD of one kind's.
	byNode map[*yaml.RNode]*crdEntry
	// verdicts is this render's verdicts of olm-cmp-check's checks, by key.
	verdicts map[checkproc.Key][]string
	// builtins is the render's built-in objects and their verdicts
	// (builtins.go), nil when plan did not see the render.
	builtins *builtinSet
}

func newValidator(ctx context.Context, nodes []*yaml.RNode) *validator {
	v := &validator{ctx: ctx, crds: map[schema.GroupKind]*crdEntry{}, byNode: map[*yaml.RNode]*crdEntry{}, verdicts: map[checkproc.Key][]string{}}
	for _, n := range nodes {
		if gkOf(n) != crdGK {
			continue
		}
		e := &crdEntry{node: n}
		v.byNode[n] = e
		if gk := crdKind(n); gk.Kind != "" {
			v.crds[gk] = e
		}
	}
	return v
}

// crdKind is the group and kind of the custom resources CRD n defines.
func crdKind(n *yaml.RNode) schema.GroupKind {
	group, _ := n.GetString("spec.group")
	kind, _ := n.GetString("spec.names.kind")
	return schema.GroupKind{Group: group, Kind: kind}
}

var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

func gkOf(n *yaml.RNode) schema.GroupKind {
	g, _ := resid.ParseGroupVersion(n.GetApiVersion())
	return schema.GroupKind{Group: g, Kind: n.GetKind()}
}

// object validates n and returns its error line, or "" when it is valid.
// An error is the validator's own failure, not n's.
func (v *validator) object(n *yaml.RNode) (string, error) {
	gv, err := schema.ParseGroupVersion(n.GetApiVersion())
	if err != nil {
		return v.line(n, kindBuiltin, []string{fmt.Sprintf("apiVersion: %q is not group/version", n.GetApiVersion())}), nil
	}
	gvk := gv.WithKind(n.GetKind())
	if p := controlCharacters(n); len(p) > 0 {
		return v.line(n, kindBuiltin, p), nil
	}
	var problems []string
	class := kindOther
	if gvk.GroupKind() == crdGK {
		// Its metadata and name are checked here; the rest as the API
		// server checks a CRD (crd.go), a verdict cached by the CRD's
		// content: decoding a large CRD and compiling its CEL rules is
		// most of this step's cost on a bundle of large CRDs.
		e := v.byNode[n]
		if e == nil { // not seen by newValidator (a test's single object)
			e = &crdEntry{node: n}
		}
		definition, err := v.crdVerdict(e)
		if err != nil {
			return "", fmt.Errorf("%s: %w", describe(n), err)
		}
		if p := append(crdProblems(n), definition...); len(p) > 0 {
			return v.line(n, kindCRD, p), nil
		}
		return "", nil
	}
	if p, ok := v.builtinCached(n); ok {
		class, problems = kindBuiltin, p
	} else if builtin, cr := v.recognizes(n, gvk), v.crds[gvk.GroupKind()] != nil; builtin || cr {
		// Decoded from the bytes the plugin sends, as the API server would.
		data, err := v.json.Object(n)
		if err != nil {
			return "", fmt.Errorf("%s: %w", describe(n), err)
		}
		if builtin {
			class = kindBuiltin
			problems, err = v.builtin(n, gvk, data)
			v.builtinJudged(n, problems)
		} else {
			class = kindCR
			problems, err = v.customResource(n, gvk, data)
		}
		if err != nil {
			return "", err
		}
	} else {
		problems = fieldtext.Metadata(metaOf(n), gvk.GroupKind())
	}
	if len(problems) == 0 {
		return "", nil
	}
	return v.line(n, class, problems), nil
}

// builtin decodes data strictly into gvk's Go type and validates its
// metadata.
func (v *validator) builtin(n *yaml.RNode, gvk schema.GroupVersionKind, data []byte) ([]string, error) {
	obj, err := decode(data)
	problems := fieldtext.Decode(err)
	acc, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return problems, nil
	}
	problems = append(problems, fieldtext.Metadata(acc.GetObjectMeta(), gvk.GroupKind())...)
	problems = append(problems, nestedProblems(obj)...)
	if hooks := webhooksOf(obj); hooks != nil {
		hp, err := v.webhookProblems(describe(n), hooks)
		return append(problems, hp...), err
	}
	return append(problems, fieldtext.Lines(kindProblems(obj))...), nil
}

// jobsOf is what olm-cmp-check checks of n, a non-CRD object of the render
// (plan): a custom resource against the CRD the render ships, an admission
// webhook configuration's client configs.
func (v *validator) jobsOf(n *yaml.RNode) ([]pending, error) {
	gv, err := schema.ParseGroupVersion(n.GetApiVersion())
	if err != nil || len(controlCharacters(n)) > 0 {
		return nil, nil // object() refuses it before any check
	}
	gvk := gv.WithKind(n.GetKind())
	builtin, cr := v.recognizes(n, gvk), v.crds[gvk.GroupKind()] != nil
	if !cr && !(builtin && gvk.Group == admissionregistrationv1.GroupName) {
		return nil, nil
	}
	if _, ok := v.builtinCached(n); ok {
		return nil, nil // its client configs' verdicts are in the render's
	}
	data, err := v.json.Object(n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe(n), err)
	}
	if !builtin {
		p, _ := v.crJob(n, gvk, data, false)
		return []pending{p}, nil
	}
	obj, _ := decode(data)
	var jobs []pending
	for i, h := range webhooksOf(obj) {
		jobs = append(jobs, clientConfigJob(describe(n), i, h.clientConfig))
	}
	return jobs, nil
}

// crdProblems checks a CRD's metadata and that its name is
// spec.names.plural + "." + spec.group, as the API server requires.
func crdProblems(n *yaml.RNode) []string {
	problems := fieldtext.Metadata(metaOf(n), crdGK)
	plural, _ := n.GetString("spec.names.plural")
	group, _ := n.GetString("spec.group")
	if want := plural + "." + group; n.GetName() != want {
		problems = append(problems, fmt.Sprintf("metadata.name: must be spec.names.plural+\".\"+spec.group, %s", echo.Quote(want)))
	}
	return problems
}

// metaOf reads the metadata the validation functions look at from n.
func metaOf(n *yaml.RNode) *metav1.ObjectMeta {
	m := &metav1.ObjectMeta{
		Name:        n.GetName(),
		Namespace:   n.GetNamespace(),
		Labels:      n.GetLabels(),
		Annotations: n.GetAnnotations(),
	}
	m.GenerateName, _ = n.GetString("metadata.generateName")
	return m
}

// controlCharacters refuses names, generate names and namespaces that hold
// a control character: no name rule of Kubernetes lets one through except
// RBAC's path segments, and a newline in a name was used to forge lines of
// `diff`'s markdown.
func controlCharacters(n *yaml.RNode) []string {
	var out []string
	gen, _ := n.GetString("metadata.generateName")
	for _, f := range [][2]string{{"metadata.name", n.GetName()}, {"metadata.generateName", gen}, {"metadata.namespace", n.GetNamespace()}} {
		if strings.IndexFunc(f[1], isControl) >= 0 {
			out = append(out, f[0]+": holds a control character (a newline, tab, escape…), which no object name may hold")
		}
	}
	return out
}

func isControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// Classes of objects, for the fix an error line offers.
const (
	kindBuiltin = iota
	kindCR
	kindCRD
	kindOther
)

// line writes n's error line: the object, its problems, the fix.
func (v *validator) line(n *yaml.RNode, class int, problems []string) string {
	problems = fieldtext.Cut(problems, maxProblems)
	var o Origin
	if v.origin != nil {
		o = v.origin(n)
	}
	what, file := describe(n), o.Where
	if file != "" {
		what += " (in " + file + ")"
	}
	var fix string
	switch {
	case class == kindCRD: // the caller's fix would leave out what the operator needs
		fix = crdFix(o)
	case o.Fix != "":
		fix = o.Fix
	case class == kindCR && file != "":
		fix = "fix the custom resource in " + file + ", or change it with spec.patches"
	case class == kindCR:
		fix = fmt.Sprintf("fix the custom resource (the extra manifest, or with spec.patches); an alm-example is rendered only when spec.examples names its kind, so leave that kind out or add %q to spec.exclude", n.GetKind()+"/"+n.GetName())
	case file != "":
		fix = "fix " + file + ", or change it with a patch (spec.patches; a JSON 6902 `op: remove` drops a field)"
	default:
		fix = "fix the file it comes from, or change it with a patch (spec.patches; a JSON 6902 `op: remove` drops a field)"
	}
	return fmt.Sprintf("%s: %s: %s", what, strings.Join(problems, "; "), fix)
}

// describe names an object as "Kind namespace/name", the name quoted when it
// holds spaces or characters a terminal would act on.
func describe(n *yaml.RNode) string {
	id := printable(n.GetName())
	if ns := n.GetNamespace(); ns != "" {
		id = printable(ns) + "/" + id
	}
	return printable(n.GetKind()) + " " + id
}

func printable(s string) string {
	if len(s) > 253 || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '"' }) >= 0 {
		return echo.Quote(s)
	}
	return s
}
