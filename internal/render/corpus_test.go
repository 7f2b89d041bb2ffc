package render

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/transform"
)

// sharedDir is the reference data beside the repository (not on users' clones).
const sharedDir = "../../../shared"

func requireShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(sharedDir, "bundles")); err != nil {
		t.Skipf("reference bundles not available (%s missing): this test runs in CI, where ../shared sits beside the repository", sharedDir)
	}
}

// corpusBundles lists every real bundle directory: shared/bundles/* and
// shared/olmv1-testdata/bundles/<op>/<version>.
func corpusBundles(t testing.TB) map[string]string {
	t.Helper()
	return corpusBundlesIn(t, sharedDir)
}

// corpusBundlesIn is corpusBundles of the shared data at shared.
func corpusBundlesIn(t testing.TB, shared string) map[string]string {
	t.Helper()
	out := map[string]string{}
	top, _ := filepath.Glob(filepath.Join(shared, "bundles", "*", "manifests"))
	nested, _ := filepath.Glob(filepath.Join(shared, "olmv1-testdata", "bundles", "*", "*", "manifests"))
	for _, m := range append(top, nested...) {
		dir := filepath.Dir(m)
		rel, _ := filepath.Rel(shared, dir)
		out[rel] = dir
	}
	if len(out) < 20 {
		t.Fatalf("expected the 23 corpus bundles, found %d", len(out))
	}
	return out
}

// corpusNamespace follows olmv1-reference/README.md: <first word of the bundle dir>-system.
func corpusNamespace(rel string) string {
	parts := strings.Split(rel, "/")
	name := parts[1]
	if len(parts) > 3 { // olmv1-testdata/bundles/<op>/<version>
		name = parts[2]
	}
	return strings.SplitN(name, "-", 2)[0] + "-system"
}

func dirRequest(t testing.TB, dir, ns string) Request {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Request{Spec: spec.Spec{Bundle: abs, Namespace: ns}}
}

// brokenCorpusBundle is the corpus bundle whose ConfigMap the API server
// refuses (operator-controller's test bundle for a failing install).
const brokenCorpusBundle = "olmv1-testdata/bundles/test-operator/v1.0.3"

// corpusRequest is the request for a corpus bundle, the broken one with its
// invalid ConfigMap excluded.
func corpusRequest(t testing.TB, rel, dir string) Request {
	req := dirRequest(t, dir, corpusNamespace(rel))
	if rel == brokenCorpusBundle {
		req.Spec.Exclude = []string{"ConfigMap/wrong-test-configmap"}
	}
	return req
}

// TestCorpusRendersDeterministically renders every real bundle twice: the
// output must be byte-identical and valid YAML, or the error OLM gives.
func TestCorpusRendersDeterministically(t *testing.T) {
	requireShared(t)
	bundles := corpusBundles(t)
	names := slices.Sorted(maps.Keys(bundles))
	for _, rel := range names {
		t.Run(rel, func(t *testing.T) {
			req := dirRequest(t, bundles[rel], corpusNamespace(rel))
			a, errA := (&Renderer{}).Render(context.Background(), req)
			if strings.Contains(rel, "single-namespace-operator") {
				// Supports only SingleNamespace: OLM asks for a watch namespace.
				if errA == nil || !strings.Contains(errA.Error(), "SingleNamespace") {
					t.Fatalf("want OLM's install-mode error, got %v", errA)
				}
				req.Spec.WatchNamespaces = []string{"watched"}
				if _, err := (&Renderer{}).Render(context.Background(), req); err != nil {
					t.Fatalf("with a watch namespace it must render: %v", err)
				}
				return
			}
			if rel == brokenCorpusBundle {
				// OLM v1's test bundle ships a ConfigMap with a field ConfigMaps
				// do not have, so that its install fails: the validate step
				// refuses it, naming its file, and spec.exclude is the way past.
				for _, want := range []string{
					"ConfigMap test-system/wrong-test-configmap (in the bundle file manifests/bundle.configmap.yaml): wrongfield: unknown field",
					`leave it out with spec.exclude: ["ConfigMap/wrong-test-configmap"]`,
				} {
					if errA == nil || !strings.Contains(errA.Error(), want) {
						t.Fatalf("want the validate step's error %q, got %v", want, errA)
					}
				}
				req = corpusRequest(t, rel, bundles[rel])
				a, errA = (&Renderer{}).Render(context.Background(), req)
			}
			if errA != nil {
				t.Fatal(errA)
			}
			b, err := (&Renderer{}).Render(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.YAML(), b.YAML()) {
				t.Fatal("two renders differ")
			}
			assertReadsBack(t, req)
			nodes := parse(t, a.YAML())
			if len(nodes) != len(a.Manifests) || len(nodes) == 0 {
				t.Fatalf("%d documents for %d manifests", len(nodes), len(a.Manifests))
			}
			for _, n := range nodes {
				if n.GetKind() == "ClusterServiceVersion" {
					t.Error("the CSV must not be emitted")
				}
				if n.GetKind() == "CustomResourceDefinition" && n.Field("status") != nil {
					t.Errorf("CRD %s keeps its status", n.GetName())
				}
				if _, hook := n.GetAnnotations()["argocd.argoproj.io/hook"]; hook {
					continue // the settle hook runs after the waves
				}
				wave(t, n)
			}
		})
	}
}

// The three seed operators, configured as users run them.

func TestSeedLWSOperator(t *testing.T) {
	requireShared(t)
	req := dirRequest(t, filepath.Join(sharedDir, "bundles/leader-worker-set-1.0.0"), "openshift-lws-operator")
	req.Spec.ImagePullSecrets = []string{"redhat-pull-secret"}
	req.Spec.AuthReaderBinding = true
	req.Spec.Examples = []string{"LeaderWorkerSetOperator"}
	res := mustRender(t, req)
	nodes := parse(t, res.YAML())

	dep := find(nodes, "Deployment", "")
	if dep == nil || dep.GetNamespace() != "openshift-lws-operator" {
		t.Fatal("operator Deployment missing or in the wrong namespace")
	}
	// OwnNamespace: the operator watches its own namespace.
	if !strings.Contains(dep.MustString(), "olm.targetNamespaces: openshift-lws-operator") {
		t.Errorf("olm.targetNamespaces is not the install namespace:\n%s", dep.MustString())
	}
	if find(nodes, "Role", "") == nil || find(nodes, "ClusterRole", "") == nil {
		t.Error("OwnNamespace mode needs the Role and the ClusterRole")
	}
	sa := find(nodes, "ServiceAccount", "")
	if sa == nil || !strings.Contains(sa.MustString(), "redhat-pull-secret") {
		t.Error("the operator's ServiceAccount lacks the pull secret")
	}
	var binding bool
	for _, n := range nodes {
		if n.GetKind() == "RoleBinding" && n.GetNamespace() == "kube-system" &&
			strings.Contains(n.MustString(), "extension-apiserver-authentication-reader") {
			binding = true
		}
	}
	if !binding {
		t.Error("no kube-system auth-reader RoleBinding")
	}
	cr := find(nodes, "LeaderWorkerSetOperator", "")
	if cr == nil {
		t.Fatal("the LeaderWorkerSetOperator CR from alm-examples is missing")
	}
	// The CSV lists two variants named "cluster"; one object, with a warning.
	crs := 0
	for _, n := range nodes {
		if n.GetKind() == "LeaderWorkerSetOperator" {
			crs++
		}
	}
	if crs != 1 {
		t.Errorf("LeaderWorkerSetOperator rendered %d times", crs)
	}
	if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "alm-examples[1]") {
		t.Errorf("want a warning about the second example, got %q", res.Warnings)
	}
	if wave(t, cr) <= wave(t, dep) {
		t.Error("the CR must come after the operator")
	}
}

func TestSeedCertManagerOperator(t *testing.T) {
	requireShared(t)
	req := dirRequest(t, filepath.Join(sharedDir, "bundles/cert-manager-operator-1.20.0"), "cert-manager-operator")
	req.Spec.Exclude = []string{"console.openshift.io/*"}
	res := mustRender(t, req)
	nodes := parse(t, res.YAML())
	for _, n := range nodes {
		if strings.HasPrefix(n.GetApiVersion(), "console.openshift.io/") {
			t.Errorf("%s/%s not excluded", n.GetKind(), n.GetName())
		}
	}
	if c := strings.Count(string(res.YAML()), "kind: CustomResourceDefinition"); c != 10 {
		t.Errorf("want the 10 CRDs, got %d", c)
	}

	// Without the exclude the console kinds are there (the exclude did the work).
	req.Spec.Exclude = nil
	all := mustRender(t, req)
	if !strings.Contains(string(all.YAML()), "kind: ConsoleYAMLSample") {
		t.Error("the bundle's ConsoleYAMLSamples should render when not excluded")
	}
}

func TestSeedSailOperatorLargeCRDs(t *testing.T) {
	requireShared(t)
	req := dirRequest(t, filepath.Join(sharedDir, "bundles/sailoperator-1.30.3"), "sail-operator")
	res := mustRender(t, req)
	nodes := parse(t, res.YAML())
	ssa := map[string]bool{}
	for _, n := range nodes {
		if strings.Contains(n.GetAnnotations()["argocd.argoproj.io/sync-options"], "ServerSideApply=true") {
			ssa[n.GetKind()+"/"+n.GetName()] = true
		}
	}
	for _, name := range []string{"istios.sailoperator.io", "istiorevisions.sailoperator.io", "ztunnels.sailoperator.io", "destinationrules.networking.istio.io"} {
		if !ssa["CustomResourceDefinition/"+name] {
			t.Errorf("CRD %s (> 256 KiB) lacks ServerSideApply=true", name)
		}
	}
	// Every CRD takes SSA (see transform.SyncWaves); no other object is big
	// enough to need it.
	for _, n := range nodes {
		id := n.GetKind() + "/" + n.GetName()
		if (n.GetKind() == "CustomResourceDefinition") != ssa[id] {
			t.Errorf("%s: ServerSideApply=%v", id, ssa[id])
		}
	}
}

func BenchmarkRenderLWS(b *testing.B) {
	requireShared(b)
	benchRender(b, dirRequest(b, filepath.Join(sharedDir, "bundles/leader-worker-set-1.0.0"), "openshift-lws-operator"))
}

func BenchmarkRenderSail(b *testing.B) {
	requireShared(b)
	benchRender(b, dirRequest(b, filepath.Join(sharedDir, "bundles/sailoperator-1.30.3"), "sail-operator"))
}

// BenchmarkRenderKubevirt is a large bundle of many mid-sized CRDs and a
// CSV with many deployments (2.7 MB), beside sail-operator's few huge CRDs.
func BenchmarkRenderKubevirt(b *testing.B) {
	requireShared(b)
	benchRender(b, dirRequest(b, filepath.Join(sharedDir, "bundles/community-kubevirt-hyperconverged-1.18.1"), "kubevirt-hyperconverged"))
}

// benchRender measures the whole cold path from a directory: load, convert,
// transform, serialize (what `olm-cmp render` does once per process).
func benchRender(b *testing.B, req Request) {
	b.ReportAllocs()
	var bytesOut int
	for b.Loop() {
		res, err := (&Renderer{}).Render(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		bytesOut = len(res.YAML())
	}
	b.SetBytes(int64(bytesOut))
}

// assertReadsBack checks every printed document parses back to exactly the
// object it was printed from (the YAML encoder has known bugs; see
// transform.Serialize).
func assertReadsBack(t *testing.T, req Request) {
	t.Helper()
	r := &Renderer{}
	rv, err := r.Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Load(context.Background(), rv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPipeline(req, b)
	if err != nil {
		t.Fatal(err)
	}
	nodes, manifests, err := p.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		if err := transform.VerifyRoundTrip(n, manifests[i]); err != nil {
			t.Errorf("%s/%s: %v", n.GetKind(), n.GetName(), err)
		}
	}
}

// TestCorpusPrinterMatchesEncoder checks Serialize's own YAML printer against
// kyaml's encoder on every object of every real bundle's render: the same
// bytes, and the printer (not the encoder's fallback) prints every object.
func TestCorpusPrinterMatchesEncoder(t *testing.T) {
	requireShared(t)
	bundles := corpusBundles(t)
	for _, rel := range slices.Sorted(maps.Keys(bundles)) {
		t.Run(rel, func(t *testing.T) {
			req := corpusRequest(t, rel, bundles[rel])
			if strings.Contains(rel, "single-namespace-operator") {
				req.Spec.WatchNamespaces = []string{"watched"}
			}
			b, err := (&Renderer{}).Load(context.Background(), mustResolve(t, req))
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPipeline(req, b)
			if err != nil {
				t.Fatal(err)
			}
			nodes, _, err := p.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes {
				printed, err := transform.VerifyPrinter(n)
				if err != nil {
					t.Errorf("%s/%s: %v", n.GetKind(), n.GetName(), err)
				} else if !printed {
					t.Errorf("%s/%s: left to the encoder", n.GetKind(), n.GetName())
				}
			}
		})
	}
}

func mustResolve(t *testing.T, req Request) Resolved {
	t.Helper()
	rv, err := (&Renderer{}).Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}
