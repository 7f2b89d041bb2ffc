// Package e2e applies olm-cmp's output to a real control plane (kube-apiserver, etcd, KCM,
// scheduler, kwok fake nodes) started by run.sh inside a private network namespace.
// Without run.sh's environment every test skips.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

const waveAnnotation = "argocd.argoproj.io/sync-wave"

// env is what run.sh hands the tests.
type env struct {
	olmCmp string // olm-cmp binary built from this checkout
	repo   string // repository root
	shared string // ../shared (may not exist)
	work   string // scratch dir for specs and rendered streams
}

func setup(t *testing.T) env {
	t.Helper()
	if os.Getenv("KUBECONFIG") == "" || os.Getenv("OLM_CMP_BIN") == "" {
		t.Skip("e2e needs a control plane: run test/e2e/run.sh (make e2e)")
	}
	e := env{olmCmp: os.Getenv("OLM_CMP_BIN"), repo: os.Getenv("OLM_CMP_REPO"), shared: os.Getenv("OLM_CMP_SHARED")}
	e.work = t.TempDir()
	if w := os.Getenv("E2E_WORK"); w != "" {
		e.work = filepath.Join(w, "tests", sanitize(t.Name()))
		if err := os.MkdirAll(e.work, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e env) sharedBundles(t *testing.T) string {
	d := filepath.Join(e.shared, "bundles")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("%s not found: the shared bundle corpus is only present next to the project checkout (skipping)", d)
	}
	return d
}

// ---------------------------------------------------------------- manifests

// Doc is one object of a rendered stream.
type Doc struct {
	Raw                               string
	Obj                               map[string]any
	APIVersion, Kind, Name, Namespace string
	Wave                              int
}

func (d Doc) Group() string {
	if i := strings.Index(d.APIVersion, "/"); i >= 0 {
		return d.APIVersion[:i]
	}
	return ""
}

// Key identifies an object across versions of a render.
func (d Doc) Key() string {
	return fmt.Sprintf("%s/%s %s/%s", d.Group(), d.Kind, d.Namespace, d.Name)
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// splitStream splits a YAML stream at document markers (a line "---"); olm-cmp writes one
// object per document.
func splitStream(t *testing.T, stream []byte) []Doc {
	t.Helper()
	var out []Doc
	for _, part := range docSep.Split(string(stream), -1) {
		if strings.TrimSpace(stripComments(part)) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
			t.Fatalf("rendered document is not YAML: %v\n%s", err, head(part))
		}
		d := Doc{Raw: part, Obj: obj}
		d.APIVersion, _ = obj["apiVersion"].(string)
		d.Kind, _ = obj["kind"].(string)
		d.Name = str(obj, "metadata", "name")
		d.Namespace = str(obj, "metadata", "namespace")
		if d.Kind == "" || d.APIVersion == "" || d.Name == "" {
			t.Fatalf("rendered object without apiVersion/kind/name:\n%s", head(part))
		}
		if w := str(obj, "metadata", "annotations", waveAnnotation); w != "" {
			n, err := strconv.Atoi(w)
			if err != nil {
				t.Fatalf("%s: sync-wave %q is not an integer", d.Key(), w)
			}
			d.Wave = n
		}
		out = append(out, d)
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func str(obj map[string]any, path ...string) string {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func head(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

func sanitize(s string) string {
	s = strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(s, "-"))
	return strings.Trim(s, "-")
}

// nsName makes a DNS-1123 label from a bundle directory name.
func nsName(prefix, s string) string {
	n := sanitize(prefix + "-" + s)
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	return n
}

// ---------------------------------------------------------------- commands

func run(ctx context.Context, name string, args ...string) (stdout, stderr []byte, err error) {
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

func kubectl(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o, e, err := run(ctx, "kubectl", args...)
	if err != nil {
		return o, fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, e)
	}
	return o, nil
}

func mustKubectl(t *testing.T, args ...string) []byte {
	t.Helper()
	o, err := kubectl(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// render runs `olm-cmp render dir`, saves the stream next to the spec and splits it.
func (e env) render(t *testing.T, dir string, flags ...string) []Doc {
	t.Helper()
	docs, stderr, err := e.tryRender(t, dir, flags...)
	if err != nil {
		t.Fatalf("olm-cmp render %s: %v\n%s", dir, err, stderr)
	}
	return docs
}

// tryRender is render that returns olm-cmp's failure instead of failing the test.
func (e env) tryRender(t *testing.T, dir string, flags ...string) ([]Doc, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	o, stderr, err := run(ctx, e.olmCmp, append(append([]string{"render"}, flags...), dir)...)
	if err != nil {
		return nil, stderr, err
	}
	if len(bytes.TrimSpace(stderr)) > 0 {
		t.Logf("olm-cmp render %s (stderr):\n%s", filepath.Base(dir), bytes.TrimSpace(stderr))
	}
	// saved outside dir: any other YAML next to olm-cmp.yaml is an extra manifest
	_ = os.WriteFile(filepath.Join(e.work, fmt.Sprintf("rendered-%s-%d.yaml", filepath.Base(dir), time.Now().UnixNano())), o, 0o644)
	docs := splitStream(t, o)
	t.Logf("rendered %s: %d objects in %v", filepath.Base(dir), len(docs), time.Since(start).Round(time.Millisecond))
	return docs, stderr, nil
}

// refusedExample is the end of olm-cmp's refusal of an alm-example that its own CRD's schema
// rejects (upstream LokiStack lacks storage.secret.type, cert-manager's CertificateRequest
// sets request: XXX): the message names the spec.exclude entry that gets past it.
var refusedExample = regexp.MustCompile(`an alm-example is rendered only when spec\.examples names its kind, so leave that kind out or add "([^"]+)" to spec\.exclude`)

// renderFollowingRefusals writes f into dir and renders it; when olm-cmp refuses alm-examples
// their own CRDs reject, it does what the message says, as a user would: it adds each named
// example to spec.exclude and renders again. Anything else olm-cmp refuses fails the test.
func (e env) renderFollowingRefusals(t *testing.T, dir string, f map[string]any, flags ...string) []Doc {
	t.Helper()
	for try := 0; ; try++ {
		writeSpecFile(t, dir, f)
		docs, stderr, err := e.tryRender(t, dir, flags...)
		if err == nil {
			return docs
		}
		found := refusedExample.FindAllStringSubmatch(string(stderr), -1)
		if len(found) == 0 || try == 3 {
			t.Fatalf("olm-cmp render %s: %v\n%s", dir, err, stderr)
		}
		spec := f["spec"].(map[string]any)
		exclude, _ := spec["exclude"].([]any)
		for _, m := range found {
			t.Logf("olm-cmp refused the alm-example %s (its CRD's schema rejects it): excluded, as its message says", m[1])
			exclude = append(exclude, m[1])
		}
		spec["exclude"] = exclude
	}
}

// ---------------------------------------------------------------- bundle facts

// almExampleKinds returns the kinds of the CSV's alm-examples (sorted, unique).
func almExampleKinds(t *testing.T, bundleDir string) []string {
	t.Helper()
	seen := map[string]bool{}
	var kinds []string
	for _, o := range almExamples(t, bundleDir) {
		if k, _ := o["kind"].(string); k != "" && !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return kinds
}

// almExamples returns the CSV's alm-examples objects.
func almExamples(t *testing.T, bundleDir string) []map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(bundleDir, "manifests", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(b, []byte("ClusterServiceVersion")) {
			continue
		}
		var csv map[string]any
		if yaml.Unmarshal(b, &csv) != nil || csv["kind"] != "ClusterServiceVersion" {
			continue
		}
		ex := str(csv, "metadata", "annotations", "alm-examples")
		if ex == "" {
			return nil
		}
		var objs []map[string]any
		if err := json.Unmarshal([]byte(ex), &objs); err != nil {
			t.Logf("%s: alm-examples is not a JSON list (%v): no examples", filepath.Base(bundleDir), err)
			return nil
		}
		return objs
	}
	t.Fatalf("%s: no ClusterServiceVersion in manifests/", bundleDir)
	return nil
}

// ignoreWebhookPatches makes every webhook of every rendered webhook configuration
// failurePolicy: Ignore, as JSON 6902 patches (spec.patches) targeted by kind and name:
// kwok pods serve nothing, so a Fail policy would block every matching request.
func ignoreWebhookPatches(docs []Doc) []map[string]any {
	var patches []map[string]any
	for _, d := range docs {
		if d.Kind != "ValidatingWebhookConfiguration" && d.Kind != "MutatingWebhookConfiguration" {
			continue
		}
		hooks, _ := d.Obj["webhooks"].([]any)
		var ops []map[string]any
		for i := range hooks {
			ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("/webhooks/%d/failurePolicy", i), "value": "Ignore"})
		}
		if len(ops) == 0 {
			continue
		}
		p, _ := json.Marshal(ops)
		patches = append(patches, map[string]any{
			"target": map[string]any{"group": "admissionregistration.k8s.io", "version": "v1", "kind": d.Kind, "name": d.Name},
			"patch":  string(p),
		})
	}
	return patches
}

// ---------------------------------------------------------------- applying

// applier applies rendered streams wave by wave, the way Argo CD would sync them.
type applier struct {
	t          *testing.T
	dir        string                    // where wave files are written
	crds       map[string]map[string]any // group/kind -> CRD object, of everything applied so far
	served     map[string]map[string]bool
	stubbed    map[string]bool
	namespaces map[string]bool
	examples   []map[string]any // the CSVs' alm-examples, as published
}

func newApplier(t *testing.T, dir string) *applier {
	return &applier{t: t, dir: dir, crds: map[string]map[string]any{}, served: map[string]map[string]bool{}, stubbed: map[string]bool{}, namespaces: map[string]bool{}}
}

// waves groups docs by sync wave, ascending.
func waves(docs []Doc) ([]int, map[int][]Doc) {
	by := map[int][]Doc{}
	for _, d := range docs {
		by[d.Wave] = append(by[d.Wave], d)
	}
	var ws []int
	for w := range by {
		ws = append(ws, w)
	}
	sort.Ints(ws)
	return ws, by
}

// apply applies docs wave by wave with server-side apply, waits after each wave (CRDs
// Established, Deployments Available) and checks every object exists. It returns the objects
// that were skipped on purpose (with the reason logged).
func (a *applier) apply(label string, docs []Doc) (applied []Doc) {
	t := a.t
	t.Helper()
	ws, by := waves(docs)
	for _, w := range ws {
		var batch []Doc
		for _, d := range by[w] {
			if d.Kind == "CustomResourceDefinition" {
				a.crds[crdGroupKind(d.Obj)] = d.Obj
			}
		}
		for _, d := range by[w] {
			if reason := a.skipReason(d); reason != "" {
				t.Logf("%s wave %d: skip %s: %s", label, w, d.Key(), reason)
				continue
			}
			if d.Kind != "CustomResourceDefinition" {
				a.ensureServed(d)
			}
			batch = append(batch, d)
		}
		if len(batch) == 0 {
			continue
		}
		a.ensureNamespaces(label, docs, batch)
		a.ensurePriorityClasses(label, docs, batch)
		file := filepath.Join(a.dir, fmt.Sprintf("%s-wave%+d.yaml", sanitize(label), w))
		writeDocs(t, file, batch)
		start := time.Now()
		if _, err := kubectl(t, "apply", "--server-side", "--force-conflicts", "--field-manager=olm-cmp-e2e", "-f", file); err != nil {
			batch = a.applyEach(label, w, batch, err)
			if len(batch) == 0 {
				continue
			}
			writeDocs(t, file, batch)
		}
		a.waitWave(label, w, batch)
		// every object accepted and readable
		out := mustKubectl(t, "get", "-f", file, "-o", "name")
		if n := len(strings.Fields(string(out))); n != len(batch) {
			t.Fatalf("%s wave %d: %d objects applied, %d found:\n%s", label, w, len(batch), n, out)
		}
		t.Logf("%s wave %+d: %d objects applied and ready in %v", label, w, len(batch), time.Since(start).Round(time.Millisecond))
		applied = append(applied, batch...)
	}
	return applied
}

// ensureNamespaces creates namespaces that objects of the batch live in but that the render
// does not create (an alm-example pinned to a namespace, say), as Argo CD's CreateNamespace would.
func (a *applier) ensureNamespaces(label string, all, batch []Doc) {
	rendered := map[string]bool{}
	for _, d := range all {
		if d.Kind == "Namespace" && d.APIVersion == "v1" {
			rendered[d.Name] = true
		}
	}
	for _, d := range batch {
		ns := d.Namespace
		if ns == "" || rendered[ns] || a.namespaces[ns] {
			continue
		}
		a.namespaces[ns] = true
		if out, _ := kubectl(a.t, "get", "namespace", ns, "-o", "name", "--ignore-not-found"); strings.TrimSpace(string(out)) != "" {
			continue
		}
		mustKubectl(a.t, "create", "namespace", ns)
		a.t.Logf("%s: created namespace %s (used by %s, not part of the render)", label, ns, d.Key())
	}
}

// ensurePriorityClasses creates PriorityClasses the batch's Deployments use that neither the
// cluster nor the render has (kubevirt's kubevirt-cluster-critical is created by its operator at
// run time): without them the ReplicaSet controller may not create the pods.
func (a *applier) ensurePriorityClasses(label string, all, batch []Doc) {
	rendered := map[string]bool{}
	for _, d := range all {
		if d.Kind == "PriorityClass" {
			rendered[d.Name] = true
		}
	}
	for _, d := range batch {
		if d.Kind != "Deployment" {
			continue
		}
		pc := str(d.Obj, "spec", "template", "spec", "priorityClassName")
		if pc == "" || strings.HasPrefix(pc, "system-") || rendered[pc] || a.namespaces["pc/"+pc] {
			continue
		}
		a.namespaces["pc/"+pc] = true
		if out, _ := kubectl(a.t, "get", "priorityclass", pc, "-o", "name", "--ignore-not-found"); strings.TrimSpace(string(out)) != "" {
			continue
		}
		mustKubectl(a.t, "create", "priorityclass", pc, "--value=1000000000", "--description=olm-cmp e2e stand-in")
		a.t.Logf("%s: created PriorityClass %s (used by Deployment %s, made by the operator itself at run time)", label, pc, d.Name)
	}
}

func writeDocs(t *testing.T, file string, docs []Doc) {
	t.Helper()
	var buf bytes.Buffer
	for _, d := range docs {
		buf.WriteString("---\n")
		buf.WriteString(strings.TrimLeft(d.Raw, "\n"))
		if !strings.HasSuffix(d.Raw, "\n") {
			buf.WriteString("\n")
		}
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// applyEach re-applies a failed wave object by object. The only tolerated rejection is a
// schema-invalid custom resource whose spec is exactly the CSV's alm-example (upstream sample
// data that its own CRD rejects, e.g. cert-manager's `request: XXX` for a byte field): olm-cmp
// passed it through faithfully, so it is logged and skipped. Anything else fails the test.
func (a *applier) applyEach(label string, w int, batch []Doc, waveErr error) []Doc {
	t := a.t
	var ok []Doc
	for i, d := range batch {
		file := filepath.Join(a.dir, fmt.Sprintf("%s-wave%+d-%d.yaml", sanitize(label), w, i))
		writeDocs(t, file, []Doc{d})
		_, err := kubectl(t, "apply", "--server-side", "--force-conflicts", "--field-manager=olm-cmp-e2e", "-f", file)
		if err == nil {
			ok = append(ok, d)
			continue
		}
		schemaErr := strings.Contains(err.Error(), "is invalid") || strings.Contains(err.Error(), "field not declared in schema")
		if schemaErr && a.isUpstreamExample(d) {
			t.Logf("%s wave %d: upstream alm-example %s is rejected by its own CRD schema, skipped (rendered spec == CSV example spec): %s",
				label, w, d.Key(), lastLine(err.Error()))
			continue
		}
		t.Fatalf("%s wave %d: %s not accepted: %v\n(whole wave: %v)", label, w, d.Key(), err, waveErr)
	}
	return ok
}

func (a *applier) isUpstreamExample(d Doc) bool {
	for _, ex := range a.examples {
		if ex["kind"] == d.Kind && str(ex, "metadata", "name") == d.Name && ex["apiVersion"] == d.APIVersion {
			x, _ := json.Marshal(ex["spec"])
			y, _ := json.Marshal(d.Obj["spec"])
			if bytes.Equal(x, y) {
				return true
			}
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func crdGroupKind(crd map[string]any) string {
	return str(crd, "spec", "group") + "/" + str(crd, "spec", "names", "kind")
}

// skipReason says why an object is not applied; "" means apply it.
//
// Custom resources of a CRD that converts through a webhook are applied only at the storage
// version: any other version makes the API server call the conversion webhook, and no
// operator runs on kwok's fake nodes to answer it.
func (a *applier) skipReason(d Doc) string {
	crd, ok := a.crds[d.Group()+"/"+d.Kind]
	if !ok || str(crd, "spec", "conversion", "strategy") != "Webhook" {
		return ""
	}
	version := d.APIVersion[strings.Index(d.APIVersion, "/")+1:]
	vs, _ := crd["spec"].(map[string]any)["versions"].([]any)
	for _, v := range vs {
		vm, _ := v.(map[string]any)
		if vm["name"] == version && vm["storage"] == true {
			return ""
		}
	}
	return "version " + version + " is not the storage version of a CRD converted by a webhook (no operator runs to convert it)"
}

// ensureServed creates a permissive stand-in CRD for an API the cluster does not serve and
// the render does not define (ServiceMonitor, ConsoleYAMLSample, cert-manager Certificate …):
// on a real cluster those come from other operators; here only acceptance by the API matters.
func (a *applier) ensureServed(d Doc) {
	t := a.t
	gv := d.APIVersion
	if _, ok := a.crds[d.Group()+"/"+d.Kind]; ok {
		return
	}
	if a.servedKinds(gv)[d.Kind] || a.stubbed[gv+"/"+d.Kind] {
		return
	}
	if d.Group() == "" || !strings.Contains(d.Group(), ".") {
		t.Fatalf("%s: built-in API %s/%s is not served by the cluster", d.Key(), gv, d.Kind)
	}
	plural := strings.ToLower(d.Kind)
	switch {
	case strings.HasSuffix(plural, "s"), strings.HasSuffix(plural, "x"):
		plural += "es"
	case strings.HasSuffix(plural, "y"):
		plural = plural[:len(plural)-1] + "ies"
	default:
		plural += "s"
	}
	scope := "Cluster"
	if d.Namespace != "" {
		scope = "Namespaced"
	}
	version := gv[strings.Index(gv, "/")+1:]
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
  labels: {olm-cmp.e2e/stub: "true"}
spec:
  group: %[2]s
  scope: %[3]s
  names: {plural: %[1]s, singular: %[4]s, kind: %[5]s, listKind: %[5]sList}
  versions:
  - name: %[6]s
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, plural, d.Group(), scope, strings.ToLower(d.Kind), d.Kind, version)
	file := filepath.Join(a.dir, "stub-"+plural+"."+d.Group()+".yaml")
	if err := os.WriteFile(file, []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, "apply", "--server-side", "--force-conflicts", "--field-manager=olm-cmp-e2e-stub", "-f", file)
	waitEstablished(t, plural+"."+d.Group())
	a.stubbed[gv+"/"+d.Kind] = true
	delete(a.served, gv)
	t.Logf("stand-in CRD %s.%s (%s %s): the API is not served by this cluster and not part of the render", plural, d.Group(), scope, version)
}

func (a *applier) servedKinds(gv string) map[string]bool {
	if m, ok := a.served[gv]; ok {
		return m
	}
	path := "/apis/" + gv
	if !strings.Contains(gv, "/") {
		path = "/api/" + gv
	}
	m := map[string]bool{}
	if out, err := kubectl(a.t, "get", "--raw", path); err == nil {
		var list struct {
			Resources []struct {
				Kind string `json:"kind"`
			} `json:"resources"`
		}
		if json.Unmarshal(out, &list) == nil {
			for _, r := range list.Resources {
				m[r.Kind] = true
			}
		}
	}
	a.served[gv] = m
	return m
}

func (a *applier) waitWave(label string, w int, batch []Doc) {
	t := a.t
	for _, d := range batch {
		switch d.Kind {
		case "CustomResourceDefinition":
			waitEstablished(t, d.Name)
			a.served = map[string]map[string]bool{} // discovery changed
		case "Deployment":
			if _, err := kubectl(t, "wait", "--for=condition=Available", "--timeout=120s", "-n", d.Namespace, "deployment/"+d.Name); err != nil {
				dump, _ := kubectl(t, "get", "deploy,rs,pods,events", "-n", d.Namespace)
				t.Fatalf("%s wave %d: Deployment %s/%s not Available: %v\n%s", label, w, d.Namespace, d.Name, err, dump)
			}
		}
	}
}

// waitEstablished polls (kubectl wait errors out instead of retrying on a CRD created a moment ago).
func waitEstablished(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _ := kubectl(t, "get", "crd", name, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
		if strings.TrimSpace(string(out)) == "True" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not Established after 2m", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exists reports whether the object is on the cluster.
func exists(t *testing.T, d Doc) bool {
	args := []string{"get", resourceArg(d), d.Name, "-o", "name", "--ignore-not-found"}
	if d.Namespace != "" {
		args = append(args, "-n", d.Namespace)
	}
	out, err := kubectl(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)) != ""
}

// resourceArg is kind.version.group, unambiguous for kubectl.
func resourceArg(d Doc) string {
	v := d.APIVersion[strings.Index(d.APIVersion, "/")+1:]
	if d.Group() == "" {
		return d.Kind
	}
	return d.Kind + "." + v + "." + d.Group()
}
