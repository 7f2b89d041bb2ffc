package validate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate/apicheck"
)

// demoCRD is the demo bundle's CRD (examples/demo), which the cases below
// break one way each, as a vendor's bundle could.
func demoCRD(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/demo/bundle/manifests/greeter.example.com_greeters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// broken is the demo CRD with old replaced by new, once.
func broken(t *testing.T, old, new string) string {
	t.Helper()
	crd := demoCRD(t)
	if !strings.Contains(crd, old) {
		t.Fatalf("the demo CRD no longer holds %q", old)
	}
	return strings.Replace(crd, old, new, 1)
}

const (
	demoCRDLine = "CustomResourceDefinition greeters.greeter.example.com: "
	vendorFix   = ": the bundle ships this CustomResourceDefinition as its vendor wrote it: use another version of the bundle or ask the vendor to fix it (if a spec.patches entry changes the CRD, fix that entry)"
	// firstVersion is where a second version goes, before the demo's own.
	firstVersion = "  versions:\n  - name: v1alpha1\n"
	demoSchema   = "spec.versions[0].schema.openAPIV3Schema.properties[spec]"
)

func TestDemoCRDPasses(t *testing.T) {
	if got := run(t, demoCRD(t)); got != "" {
		t.Errorf("the demo CRD is refused: %s", got)
	}
}

func TestCRDVersionWithoutSchema(t *testing.T) {
	got := run(t, broken(t, firstVersion, "  versions:\n  - {name: v1, served: true, storage: false}\n  - name: v1alpha1\n"))
	wantError(t, got, demoCRDLine+"spec.versions[0].schema.openAPIV3Schema: Required value"+vendorFix)
}

func TestCRDVersionsOfTheSameName(t *testing.T) {
	got := run(t, broken(t, firstVersion, "  versions:\n  - {name: v1alpha1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}\n  - name: v1alpha1\n"))
	wantError(t, got, demoCRDLine+`spec.versions: must contain unique version names (it has "v1alpha1", "v1alpha1", storage: true on "v1alpha1")`+vendorFix)
}

func TestCRDTwoStorageVersions(t *testing.T) {
	got := run(t, broken(t, firstVersion, "  versions:\n  - {name: v1beta1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n  - name: v1alpha1\n"))
	wantError(t, got, demoCRDLine+`spec.versions: must have exactly one version marked as storage version (it has "v1beta1", "v1alpha1", storage: true on "v1beta1" and "v1alpha1")`+vendorFix)
}

func TestCRDNoStorageVersion(t *testing.T) {
	got := run(t, broken(t, "    storage: true\n", "    storage: false\n"))
	wantError(t, got, demoCRDLine+`spec.versions: must have exactly one version marked as storage version (it has "v1alpha1", none of them with storage: true)`+vendorFix)
}

func TestCRDNonStructuralSchema(t *testing.T) {
	got := run(t, broken(t, "              message:\n                type: string\n", "              message:\n                description: no type\n"))
	wantError(t, got, demoCRDLine+demoSchema+".properties[message].type: Required value: must not be empty for specified object fields"+vendorFix)
}

func TestCRDRuleThatIsNotCEL(t *testing.T) {
	got := run(t, broken(t, "              message:\n                type: string\n",
		"              message:\n                type: string\n                x-kubernetes-validations:\n                - rule: self.size() >\n"))
	wantError(t, got, demoCRDLine+demoSchema+`.properties[message].x-kubernetes-validations[0].rule: Invalid value "self.size() >": not a valid CEL expression: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER} (line 1, column 14)`+vendorFix)

	// A rule that parses but names what the schema does not have.
	got = run(t, broken(t, "              message:\n                type: string\n",
		"              message:\n                type: string\n                x-kubernetes-validations:\n                - rule: self.lenght() > 0\n"))
	wantError(t, got, demoCRDLine+demoSchema+`.properties[message].x-kubernetes-validations[0].rule: Invalid value "self.lenght() > 0": not a valid CEL expression: undeclared reference to 'lenght' (in container '') (line 1, column 12)`+vendorFix)
}

// A rule whose cost the server cannot bound: a list without maxItems of
// strings without maxLength, each compared with every other.
func TestCRDRuleTooCostly(t *testing.T) {
	got := run(t, broken(t, "              message:\n                type: string\n",
		"              message:\n                type: string\n              names:\n                type: array\n                items: {type: string}\n                x-kubernetes-validations:\n                - rule: self.all(a, self.all(b, a == b || !a.startsWith(b)))\n"))
	if !strings.HasPrefix(got, demoCRDLine) || !strings.Contains(got, "; "+demoSchema+".properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared); ") || !strings.HasSuffix(got, vendorFix) {
		t.Errorf("a rule of unbounded cost: %s", got)
	}
}

func TestCRDWebhookConversionWithoutWebhook(t *testing.T) {
	got := run(t, broken(t, "  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n"))
	wantError(t, got, demoCRDLine+"spec.conversion.webhook.clientConfig: Required value: required when strategy is set to Webhook; spec.conversion.webhook.conversionReviewVersions: Required value"+vendorFix)
}

func TestCRDDefaultOfTheWrongType(t *testing.T) {
	got := run(t, broken(t, "                default: 1\n", "                default: one\n"))
	wantError(t, got, demoCRDLine+demoSchema+`.properties[replicas].default: must be of type integer: "string"`+vendorFix)
}

// A schema every version shares is one schema to the server (it reports
// it under spec.validation); the line points at the versions that hold it.
func TestCRDSharedSchemaNamedAsTheFileHasIt(t *testing.T) {
	crd := broken(t, "              message:\n                type: string\n", "              message:\n                description: no type\n")
	second := crd[strings.Index(crd, "    schema:\n") : strings.Index(crd, "\nstatus:\n")+1]
	crd = strings.Replace(crd, "  versions:\n", "  versions:\n  - name: v1beta1\n    served: true\n    storage: false\n    subresources:\n      status: {}\n"+second, 1)
	wantError(t, run(t, crd), demoCRDLine+"spec.versions[*].schema.openAPIV3Schema.properties[spec].properties[message].type: Required value: must not be empty for specified object fields"+vendorFix)
}

// A group of Kubernetes' own (*.k8s.io) needs the approval annotation.
func TestCRDProtectedGroupNeedsApproval(t *testing.T) {
	crd := strings.ReplaceAll(demoCRD(t), "greeter.example.com", "greeter.x-k8s.io")
	crd = strings.Replace(crd, "greeter.x-k8s.io", "greeter.k8s.io", 2) // metadata.name and spec.group
	got := run(t, crd)
	wantError(t, got, "CustomResourceDefinition greeters.greeter.k8s.io: metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"+vendorFix)
	approved := strings.Replace(crd, "  name: greeters.greeter.k8s.io\n", "  name: greeters.greeter.k8s.io\n  annotations: {api-approved.kubernetes.io: \"https://github.com/kubernetes/enhancements/pull/1111\"}\n", 1)
	if got := run(t, approved); got != "" {
		t.Errorf("approved, it is still refused: %s", got)
	}
}

// A CRD from an extra manifest is the user's to fix.
func TestCRDFromAnExtraManifest(t *testing.T) {
	nodes, err := kio.FromBytes([]byte(broken(t, "                default: 1\n", "                default: one\n")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Objects(context.Background(), func(*yaml.RNode) Origin { return Origin{Where: "the extra manifest crd.yaml"} }).Filter(nodes)
	want := "CustomResourceDefinition greeters.greeter.example.com (in the extra manifest crd.yaml): " + demoSchema + `.properties[replicas].default: must be of type integer: "string": fix the extra manifest crd.yaml`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// A CRD the caller places in a vendor's file keeps the vendor's fix: the
// caller's (leave it out) would leave the operator without its API.
func TestCRDFromABundleFile(t *testing.T) {
	nodes, err := kio.FromBytes([]byte(broken(t, "                default: 1\n", "                default: one\n")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Objects(context.Background(), func(*yaml.RNode) Origin {
		return Origin{Where: "the bundle file crd.yaml", Fix: "leave it out with spec.excludeFiles"}
	}).Filter(nodes)
	want := "CustomResourceDefinition greeters.greeter.example.com (in the bundle file crd.yaml): " + demoSchema + `.properties[replicas].default: must be of type integer: "string"` + vendorFix
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

var cacheTestRuns int

// A CRD's verdict is kept by what it depends on: the same CRD with other
// annotations (olm-cmp's own differ by render) is judged once, a changed
// spec again.
func TestCRDVerdictCachedByContent(t *testing.T) {
	// A default no other run of the test used (go test -count N).
	cacheTestRuns++
	def := strconv.Itoa(1000 + cacheTestRuns)
	crd := broken(t, "                default: 1\n", "                default: "+def+"\n")
	key := func(doc string) checkproc.Key {
		n := yaml.MustParse(doc)
		k, ok := (&validator{}).crdKey(n)
		if !ok {
			t.Fatal("no key")
		}
		return k
	}
	k := key(crd)
	if _, ok := verdicts.Get(k); ok {
		t.Fatal("judged before the test")
	}
	if got := run(t, crd); got != "" {
		t.Fatal(got)
	}
	if out, ok := verdicts.Get(k); !ok || string(out) != `{"problems":null}` {
		t.Errorf("verdict not kept: %s %v", out, ok)
	}
	annotated := strings.Replace(crd, "  name: greeters.greeter.example.com\n", "  name: greeters.greeter.example.com\n  annotations: {olm-cmp.dev/bundle: x, argocd.argoproj.io/sync-wave: \"-3\"}\n", 1)
	if key(annotated) != k {
		t.Error("annotations olm-cmp adds change the key")
	}
	if key(strings.Replace(crd, "default: "+def, "default: 3", 1)) == k {
		t.Error("a changed default keeps the key")
	}
	if key(strings.Replace(crd, "default: "+def, `default: "`+def+`"`, 1)) == k {
		t.Error("a quoted default keeps the key")
	}
	// A cached verdict is the same line.
	bad := broken(t, "                default: 1\n", "                default: [1]\n")
	if first, second := run(t, bad), run(t, bad); first == "" || first != second {
		t.Errorf("first %q, then %q", first, second)
	}
}

// apiextensions.k8s.io/v1beta1 is gone since Kubernetes 1.22.
func TestCRDOfARemovedVersion(t *testing.T) {
	got := run(t, strings.Replace(demoCRD(t), "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1))
	wantError(t, got, demoCRDLine+"apiVersion: the API server serves CustomResourceDefinitions as apiextensions.k8s.io/v1 only"+vendorFix)
}

// The server would refuse a broken CRD, so its custom resources would have
// no kind: they are not judged by its schema (a wrong default would
// otherwise fail each of them too), and the CRD's line says what to fix.
func TestCustomResourceOfABrokenCRD(t *testing.T) {
	crd := broken(t, "                default: 1\n", "                default: one\n")
	cr := "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata: {name: g, namespace: ops}\nspec: {message: hi}"
	// The custom resource first: the CRD's verdict still comes first.
	wantError(t, run(t, cr, crd), demoCRDLine+demoSchema+`.properties[replicas].default: must be of type integer: "string"`+vendorFix)
}

// A render's CRDs are judged several at once: each line is still its
// CRD's, in the order of the objects.
func TestSeveralCRDsJudgedAtOnce(t *testing.T) {
	var docs, want []string
	for i, kind := range []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon"} {
		plural := strings.ToLower(kind) + "s"
		crd := strings.NewReplacer("greeters.greeter", plural+".greeter", "kind: Greeter", "kind: "+kind, "listKind: GreeterList", "listKind: "+kind+"List", "plural: greeters", "plural: "+plural, "singular: greeter", "singular: "+strings.ToLower(kind)).Replace(demoCRD(t))
		if i%2 == 0 {
			crd = strings.Replace(crd, "default: 1", "default: "+plural, 1)
			want = append(want, "CustomResourceDefinition "+plural+".greeter.example.com: "+demoSchema+`.properties[replicas].default: must be of type integer: "string"`+vendorFix)
		}
		docs = append(docs, crd)
	}
	wantError(t, run(t, docs...), strings.Join(want, "\n"))
}

// A CRD with more rule-bearing schema nodes than olm-cmp compiles is
// refused before any is compiled (compiling is a millisecond or so each).
func TestCRDTooManyRules(t *testing.T) {
	var props strings.Builder
	for i := range apicheck.MaxRuleNodes + 1 {
		fmt.Fprintf(&props, "              p%d: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: \"self.size() > 1\"}]}\n", i)
	}
	crd := broken(t, "              message:\n                type: string\n", props.String())
	got := run(t, crd)
	wantError(t, got, demoCRDLine+"spec.versions: 5001 x-kubernetes-validations rules or more, over the 5000 olm-cmp checks in one CRD (the API server compiles each in a CEL environment of its schema node, about a millisecond apiece)"+vendorFix)

	// One node with the rules on it counts each: a node count let any
	// number of rules through.
	var rules strings.Builder
	for range apicheck.MaxRuleNodes + 1 {
		rules.WriteString("{rule: \"self.size() > 1\"},")
	}
	crd = broken(t, "              message:\n                type: string\n", "              p: {type: string, maxLength: 10, x-kubernetes-validations: ["+strings.TrimSuffix(rules.String(), ",")+"]}\n")
	wantError(t, run(t, crd), demoCRDLine+"spec.versions: 5001 x-kubernetes-validations rules or more, over the 5000 olm-cmp checks in one CRD (the API server compiles each in a CEL environment of its schema node, about a millisecond apiece)"+vendorFix)
}

// TestCRDChecksStopAtDeadline: a render whose request has ended begins no
// CRD check (compiling CEL rules is the step's long part); the step
// returns the context's cause and no objects.
func TestCRDChecksStopAtDeadline(t *testing.T) {
	second := strings.ReplaceAll(demoCRD(t), "greeter", "welcomer")
	nodes, err := kio.FromBytes([]byte(demoCRD(t) + "\n---\n" + second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("the plugin's deadline passed")
	cancel(stop)
	out, err := Objects(ctx, nil).Filter(nodes)
	if !errors.Is(err, stop) || out != nil {
		t.Fatalf("got %d objects, %v; want none and %v", len(out), err, stop)
	}
	if _, err := Objects(context.Background(), nil).Filter(nodes); err != nil {
		t.Fatalf("the same CRDs without a deadline: %v", err)
	}
}
