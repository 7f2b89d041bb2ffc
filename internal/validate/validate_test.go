package validate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// run validates the objects of a multi-document YAML stream and returns the
// error's text ("" when they are valid).
func run(t *testing.T, docs ...string) string {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(strings.Join(docs, "\n---\n")))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Objects(context.Background(), nil).Filter(nodes)
	if err != nil {
		if out != nil {
			t.Error("objects returned with an error")
		}
		return err.Error()
	}
	if len(out) != len(nodes) {
		t.Errorf("%d objects in, %d out", len(nodes), len(out))
	}
	return ""
}

const header = "" // one line per object, nothing before them

func wantError(t *testing.T, got, want string) {
	t.Helper()
	if got != header+want {
		t.Errorf("error:\n%s\nwant:\n%s%s", got, header, want)
	}
}

const fixFile = "fix the file it comes from, or change it with a patch (spec.patches; a JSON 6902 `op: remove` drops a field)"

func TestValidObjectsPass(t *testing.T) {
	got := run(t, `apiVersion: v1
kind: Namespace
metadata:
  name: ops
  labels: {app: x}`, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op.v1
  namespace: ops
  annotations: {example.com/any: "any text\nat all"}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
      - name: manager
        image: example.com/op:1
        ports: [{containerPort: 8443}]`,
		// RBAC names are path segments: a colon is fine there.
		`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:op:Reader"}
rules: []`,
		// A kind this render has no CRD for, and client-go does not know.
		`apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: cert, namespace: ops}
spec: {anything: goes}`)
	if got != "" {
		t.Error(got)
	}
}

// The settle hook's name before it was cleaned: no ConfigMap may have it.
func TestNameRuleOfTheKind(t *testing.T) {
	got := run(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: GitLab Operator-sync-settled
  namespace: gitlab-system`)
	wantError(t, got, `ConfigMap gitlab-system/"GitLab Operator-sync-settled": metadata.name: Invalid value "GitLab Operator-sync-settled": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com'): `+fixFile)

	// A Service name becomes a DNS label: no dot.
	got = run(t, "apiVersion: v1\nkind: Service\nmetadata: {name: op.metrics, namespace: ops}\nspec: {ports: [{port: 80}]}")
	if !strings.Contains(got, "Service ops/op.metrics: metadata.name: Invalid value \"op.metrics\": a DNS-1035 label") {
		t.Errorf("a Service named op.metrics: %q", got)
	}
}

func TestLabelValueTooLong(t *testing.T) {
	long := strings.Repeat("a", 64)
	got := run(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ops, labels: {app: "+long+"}}")
	wantError(t, got, `ConfigMap ops/c: metadata.labels: Invalid value "`+long[:64]+`": must be no more than 63 bytes: `+fixFile)
}

func TestControlCharacterInName(t *testing.T) {
	// RBAC's own rule lets a newline through; the validate step does not.
	got := run(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \"reader\\n| 0 safety errors |\"}\nrules: []")
	wantError(t, got, `ClusterRole "reader\n| 0 safety errors |": metadata.name: holds a control character (a newline, tab, escape…), which no object name may hold: `+fixFile)
	if strings.Contains(got, "\n") {
		t.Errorf("the name's newline reached the message: %q", got)
	}
}

func TestUnknownFieldOnADeployment(t *testing.T) {
	got := run(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: ops}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
      - name: manager
        image: example.com/op:1
        imagePullPolicy: Always
        resource: {limits: {cpu: 1}}`)
	wantError(t, got, "Deployment ops/op: spec.template.spec.containers[0].resource: unknown field: the API type has no such field, so the server would drop it or refuse the object: "+fixFile)
}

func TestWrongTypeOnADeployment(t *testing.T) {
	got := run(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: ops}
spec:
  replicas: "two"
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: m, image: i}]}`)
	wantError(t, got, "Deployment ops/op: spec.replicas: a string where the API expects a number: "+fixFile)
}

// A CRD of the render, as bundles ship them: LokiStack requires
// spec.storage.secret.type.
const lokiCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: lokistacks.loki.grafana.com}
spec:
  group: loki.grafana.com
  names: {kind: LokiStack, plural: lokistacks}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size, storage]
            properties:
              size: {type: string, enum: [1x.demo, 1x.small]}
              replicationFactor: {type: integer, default: 1}
              storage:
                type: object
                required: [secret]
                properties:
                  secret:
                    type: object
                    required: [name, type]
                    properties:
                      name: {type: string}
                      type: {type: string, enum: [s3, gcs, azure]}
  - name: v1beta1
    served: false
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}`

const crFix = `: fix the custom resource (the extra manifest, or with spec.patches); an alm-example is rendered only when spec.examples names its kind, so leave that kind out or add "LokiStack/lokistack-sample" to spec.exclude`

func TestCustomResourceMissingARequiredField(t *testing.T) {
	got := run(t, lokiCRD, `apiVersion: loki.grafana.com/v1
kind: LokiStack
metadata: {name: lokistack-sample, namespace: ops}
spec:
  size: 1x.small
  storage:
    secret: {name: logging-loki-s3}`)
	wantError(t, got, "LokiStack ops/lokistack-sample: spec.storage.secret.type: Required value"+crFix)
}

func TestCustomResourceWithAPrunedField(t *testing.T) {
	got := run(t, lokiCRD, `apiVersion: loki.grafana.com/v1
kind: LokiStack
metadata: {name: lokistack-sample, namespace: ops}
spec:
  size: 1x.small
  storageClass: fast
  storage:
    secret: {name: s, type: s3}`)
	wantError(t, got, "LokiStack ops/lokistack-sample: spec.storageClass: unknown field: the CRD's schema does not define it, so the API server would prune it"+crFix)
}

func TestCustomResourceValueTheSchemaRefuses(t *testing.T) {
	got := run(t, lokiCRD, `apiVersion: loki.grafana.com/v1
kind: LokiStack
metadata: {name: lokistack-sample, namespace: ops}
spec:
  size: XXX
  storage:
    secret: {name: s, type: s3}`)
	wantError(t, got, `LokiStack ops/lokistack-sample: spec.size: Unsupported value "XXX": supported values: "1x.demo", "1x.small"`+crFix)
}

func TestCustomResourceOfAVersionNotServed(t *testing.T) {
	got := run(t, lokiCRD, "apiVersion: loki.grafana.com/v1beta1\nkind: LokiStack\nmetadata: {name: lokistack-sample}\nspec: {}")
	wantError(t, got, `LokiStack lokistack-sample: apiVersion: CustomResourceDefinition lokistacks.loki.grafana.com serves no version "v1beta1" (it serves v1): use one of those`+crFix)
}

// Defaults apply before validation, as on the server, and a valid CR passes.
func TestValidCustomResourcePasses(t *testing.T) {
	got := run(t, `apiVersion: loki.grafana.com/v1
kind: LokiStack
metadata: {name: lokistack-sample, namespace: ops}
spec:
  size: 1x.small
  storage:
    secret: {name: s, type: s3}`, lokiCRD)
	if got != "" {
		t.Error(got)
	}
}

// Without its CRD in the render, a custom resource's schema is the
// cluster's: only its metadata is checked.
func TestCustomResourceWithoutItsCRDIsNotSchemaChecked(t *testing.T) {
	cr := `apiVersion: loki.grafana.com/v1
kind: LokiStack
metadata: {name: lokistack-sample, namespace: ops}
spec: {storageClass: fast}`
	if got := run(t, cr); got != "" {
		t.Errorf("checked against a schema it does not have: %s", got)
	}
	got := run(t, strings.Replace(cr, "lokistack-sample", "LokiStack_Sample", 1))
	if !strings.Contains(got, "LokiStack ops/LokiStack_Sample: metadata.name: Invalid value") {
		t.Errorf("metadata not checked: %q", got)
	}
}

// A CRD's name is plural.group, as the API server requires.
func TestCRDName(t *testing.T) {
	got := run(t, strings.Replace(lokiCRD, "name: lokistacks.loki.grafana.com", "name: lokistack.loki.grafana.com", 1))
	wantError(t, got, `CustomResourceDefinition lokistack.loki.grafana.com: metadata.name: must be spec.names.plural+"."+spec.group, "lokistacks.loki.grafana.com"`+vendorFix)
}

// One line per invalid object, every one of them, up to a bound.
func TestOneLinePerObject(t *testing.T) {
	var docs []string
	for _, n := range []string{"A", "B", "ok", "C"} {
		docs = append(docs, "apiVersion: v1\nkind: Secret\nmetadata: {name: "+n+", namespace: ops}")
	}
	got := run(t, docs...)
	lines := strings.Split(strings.TrimPrefix(got, header), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "Secret ops/A: ") || !strings.HasPrefix(lines[2], "Secret ops/C: ") {
		t.Errorf("want one line for each of A, B and C:\n%s", got)
	}
	docs = nil
	for i := range 12 {
		docs = append(docs, "apiVersion: v1\nkind: Secret\nmetadata: {name: X"+string(rune('a'+i))+", namespace: ops}")
	}
	got = run(t, docs...)
	if !strings.HasSuffix(got, "\nand 2 more invalid objects") {
		t.Errorf("over the bound:\n%s", got)
	}
}

// A render whose checks are all cached starts no olm-cmp-check: a second
// render of the same objects, and one of a new process (nothing in memory)
// reading the verdicts the first kept on disk.
func TestWarmRenderStartsNoHelper(t *testing.T) {
	KeepVerdicts(t.TempDir())
	defer KeepVerdicts("")
	// A CRD, its custom resource and a webhook no other test checks, so the
	// first render is cold.
	crd := strings.ReplaceAll(lokiCRD, "loki.grafana.com", "warm.grafana.com")
	cr := "apiVersion: warm.grafana.com/v1\nkind: LokiStack\nmetadata: {name: a}\nspec: {size: 1x.small, storage: {secret: {name: s, type: s3}}}"
	hook := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: warm}\nwebhooks:\n- name: warm.example.com\n  clientConfig: {service: {name: warm, namespace: ops, path: /warm}}\n  sideEffects: None\n  admissionReviewVersions: [v1]"
	before := checkproc.Spawns()
	if got := run(t, crd, cr, hook); got != "" {
		t.Fatal(got)
	}
	if n := checkproc.Spawns() - before; n != 1 {
		t.Fatalf("a cold render started %d batches, want one", n)
	}
	before = checkproc.Spawns()
	if got := run(t, crd, cr, hook); got != "" {
		t.Fatal(got)
	}
	if n := checkproc.Spawns() - before; n != 0 {
		t.Errorf("a warm render started %d batches", n)
	}
	// A new process: the memory forgotten, the disk kept.
	saved := verdicts
	verdicts = checkproc.NewStore(verdictDirName)
	defer func() { verdicts = saved }()
	verdicts.Keep(filepath.Dir(filepath.Dir(saved.Dir())))
	before = checkproc.Spawns()
	if got := run(t, crd, cr, hook); got != "" {
		t.Fatal(got)
	}
	if n := checkproc.Spawns() - before; n != 0 {
		t.Errorf("a render reading the verdicts on disk started %d batches", n)
	}
}

// embedCRD has an embedded resource and set and map lists, whose rules
// the API server checks beside the schema validator (customResourceStrategy.Validate).
const embedCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: greeters.greeter.example.com}
spec:
  group: greeter.example.com
  names: {kind: Greeter, listKind: GreeterList, plural: greeters, singular: greeter}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              template: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
              items: {type: array, items: {type: string}, x-kubernetes-list-type: set}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}}}`

const greeterFix = `: fix the custom resource (the extra manifest, or with spec.patches); an alm-example is rendered only when spec.examples names its kind, so leave that kind out or add "Greeter/g" to spec.exclude`

// An embedded resource needs apiVersion and kind, and set and map lists
// unique items: the API server refuses the custom resource otherwise.
func TestCustomResourceEmbeddedResourceAndListTypes(t *testing.T) {
	cr := "apiVersion: greeter.example.com/v1\nkind: Greeter\nmetadata: {name: g, namespace: ops}\nspec:\n"
	if got := run(t, embedCRD, cr+"  template: {apiVersion: v1, kind: Pod, metadata: {name: p}}\n  items: [a, b]\n  ports: [{name: a}, {name: b}]"); got != "" {
		t.Errorf("valid custom resource refused: %s", got)
	}
	wantError(t, run(t, embedCRD, cr+"  template: {spec: {}}"),
		"Greeter ops/g: spec.template.apiVersion: Required value; spec.template.kind: Required value"+greeterFix)
	// An embedded resource's name is a path segment, as the server checks it.
	wantError(t, run(t, embedCRD, cr+"  template: {apiVersion: v1, kind: Pod, metadata: {name: a/b}}"),
		`Greeter ops/g: spec.template.metadata.name: Invalid value "a/b": may not contain '/'`+greeterFix)
	wantError(t, run(t, embedCRD, cr+"  items: [a, a]"), `Greeter ops/g: spec.items[1]: Duplicate value "a"`+greeterFix)
	wantError(t, run(t, embedCRD, cr+"  ports: [{name: a}, {name: a}]"), `Greeter ops/g: spec.ports[1]: Duplicate value {"name":"a"}`+greeterFix)
}

// Labels and annotations inside a built-in object (a pod template's, a
// selector's, a pod's nodeSelector, from a patch or spec.config) are
// checked as the API server checks them, not only the object's own.
func TestNestedLabelsAndAnnotations(t *testing.T) {
	deployment := func(template, selector, podSpec string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: ops}
spec:
  selector: {matchLabels: {app: x` + selector + `}}
  template:
    metadata: {labels: {app: x` + template + `}}
    spec:
      containers: [{name: manager, image: i}]` + podSpec
	}
	if got := run(t, deployment("", "", "\n      nodeSelector: {kubernetes.io/os: linux}")); got != "" {
		t.Errorf("valid Deployment refused: %s", got)
	}
	const label = `Invalid value "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc')`
	for _, tc := range []struct{ template, selector, podSpec, want string }{
		{", bad key!: x", "", "", "spec.template.metadata.labels: " + label},
		{"}, annotations: {bad key!: x", "", "", "spec.template.metadata.annotations: " + label},
		{"", ", bad key!: x", "", "spec.selector.matchLabels: " + label},
		{"", "", "\n      nodeSelector: {bad key!: x}", "spec.template.spec.nodeSelector: " + label},
	} {
		wantError(t, run(t, deployment(tc.template, tc.selector, tc.podSpec)), "Deployment ops/op: "+tc.want+": "+fixFile)
	}
}

// An object whose file the caller knows (an extra manifest) is named with
// it, and the fix says which file to edit; the others keep the general fix,
// unless the caller words the fix itself (a vendor's bundle file).
func TestOriginNamesTheFile(t *testing.T) {
	nodes, err := kio.FromBytes([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nwrongfield: 1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\nwrongfield: 1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nwrongfield: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	origin := func(n *yaml.RNode) Origin {
		switch n.GetName() {
		case "a":
			return Origin{Where: "the extra manifest cm.yaml"}
		case "c":
			return Origin{Where: "the bundle file manifests/c.yaml", Fix: "leave it out with spec.exclude"}
		}
		return Origin{}
	}
	_, err = Objects(context.Background(), origin).Filter(nodes)
	want := "ConfigMap a (in the extra manifest cm.yaml): wrongfield: unknown field: the API type has no such field, so the server would drop it or refuse the object: fix the extra manifest cm.yaml, or change it with a patch (spec.patches; a JSON 6902 `op: remove` drops a field)\n" +
		"ConfigMap b: wrongfield: unknown field: the API type has no such field, so the server would drop it or refuse the object: fix the file it comes from, or change it with a patch (spec.patches; a JSON 6902 `op: remove` drops a field)\n" +
		"ConfigMap c (in the bundle file manifests/c.yaml): wrongfield: unknown field: the API type has no such field, so the server would drop it or refuse the object: leave it out with spec.exclude"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}
