package validate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// A warm render judges its built-in objects from the verdict store: no
// strict decode, in the same process or a new one reading the disk; a
// changed byte of one object is a new render, judged again, and refused
// when the change makes it invalid.
func TestWarmRenderSkipsTheDecodeOfBuiltIns(t *testing.T) {
	KeepVerdicts(t.TempDir())
	defer KeepVerdicts("")
	// Objects no other test renders, so the first render is cold.
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bcache, namespace: ops}\nspec:\n  selector: {matchLabels: {app: bcache}}\n  template:\n    metadata: {labels: {app: bcache}}\n    spec: {containers: [{name: manager, image: example.com/bcache:1, imagePullPolicy: Always}]}"
	service := "apiVersion: v1\nkind: Service\nmetadata: {name: bcache, namespace: ops}\nspec: {selector: {app: bcache}, ports: [{port: 443}]}"
	hook := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: bcache}\nwebhooks:\n- name: bcache.example.com\n  clientConfig: {service: {name: bcache, namespace: ops, path: /v}}\n  sideEffects: None\n  admissionReviewVersions: [v1]"
	render := func(docs ...string) (string, int64) {
		t.Helper()
		before := decodes.Load()
		got := run(t, docs...)
		return got, decodes.Load() - before
	}
	// Cold: each object, and the webhook configuration once more for its
	// client config's check (plan).
	if got, n := render(deployment, service, hook); got != "" || n != 4 {
		t.Fatalf("cold render: %d decodes, error %q; want 4, none", n, got)
	}
	if got, n := render(deployment, service, hook); got != "" || n != 0 {
		t.Errorf("warm render: %d decodes, error %q; want none", n, got)
	}
	// A new process: the memory forgotten, the disk kept.
	saved := verdicts
	verdicts = checkproc.NewStore(verdictDirName)
	defer func() { verdicts = saved }()
	verdicts.Keep(filepath.Dir(filepath.Dir(saved.Dir())))
	spawns := checkproc.Spawns()
	if got, n := render(deployment, service, hook); got != "" || n != 0 {
		t.Errorf("render reading the disk: %d decodes, error %q; want none", n, got)
	}
	if n := checkproc.Spawns() - spawns; n != 0 {
		t.Errorf("render reading the disk started %d batches", n)
	}
	// One byte changed: an unknown field.
	broken := strings.Replace(deployment, "imagePullPolicy", "imagePullPolicz", 1)
	want := "Deployment ops/bcache: spec.template.spec.containers[0].imagePullPolicz: unknown field: the API type has no such field, so the server would drop it or refuse the object: " + fixFile
	got, n := render(broken, service, hook)
	if n != 4 {
		t.Errorf("a changed Deployment: %d decodes, want 4", n)
	}
	wantError(t, got, want)
	// Its refusal is kept too.
	got, n = render(broken, service, hook)
	if n != 0 {
		t.Errorf("the changed Deployment again: %d decodes, want none", n)
	}
	wantError(t, got, want)
}

// A warm render checks a custom resource against its CRD without decoding
// the CRD: the verdict is keyed on the CRD's own key.
func TestWarmRenderSkipsTheDecodeOfCRDs(t *testing.T) {
	crd := strings.ReplaceAll(lokiCRD, "loki.grafana.com", "bcache.grafana.com")
	cr := "apiVersion: bcache.grafana.com/v1\nkind: LokiStack\nmetadata: {name: a}\nspec: {size: 1x.small, storage: {secret: {name: s, type: s3}}}"
	before := decodes.Load()
	if got := run(t, crd, cr); got != "" {
		t.Fatal(got)
	}
	if n := decodes.Load() - before; n != 1 {
		t.Errorf("cold render: %d decodes, want 1 (the CRD)", n)
	}
	before = decodes.Load()
	if got := run(t, crd, cr); got != "" {
		t.Fatal(got)
	}
	if n := decodes.Load() - before; n != 0 {
		t.Errorf("warm render: %d decodes, want none", n)
	}
	// A custom resource the schema refuses, met for the first time, is
	// judged against the CRD decoded now.
	bad := strings.Replace(cr, "1x.small", "1x.huge", 1)
	wantError(t, run(t, crd, bad), `LokiStack a: spec.size: Unsupported value "1x.huge": supported values: "1x.demo", "1x.small": fix the custom resource (the extra manifest, or with spec.patches); an alm-example is rendered only when spec.examples names its kind, so leave that kind out or add "LokiStack/a" to spec.exclude`)
}
