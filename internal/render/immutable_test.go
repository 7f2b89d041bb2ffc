package render

import (
	"context"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// TestRenderBundleLeavesBundleUnchanged renders one loaded *Bundle many
// times at once, as the render cache does for concurrent requests that share
// a load: every output is identical, the bundle is deep-equal to a fresh
// load of it afterwards, and Render (which owns its load) prints the same. Run with -race, it also catches a render writing to
// the bundle's nodes while another reads them (the YAML printer switches
// scalar styles on the nodes it prints, so it must be given copies).
func TestRenderBundleLeavesBundleUnchanged(t *testing.T) {
	type bundleCase struct {
		name string
		req  Request
		n    int
	}
	cases := []bundleCase{{"demo", demoRequest(t), 16}}
	// Webhooks and conversion (eclipse-che), multi-megabyte CRDs with folded
	// scalars (sail), examples (lws), when ../shared is there.
	for _, c := range []struct{ dir, ns, examples string }{
		{"eclipse-che-7.121.0", "eclipse-che", ""},
		{"sailoperator-1.30.3", "sail-operator", ""},
		{"leader-worker-set-1.0.0", "openshift-lws-operator", "LeaderWorkerSetOperator"},
	} {
		dir := filepath.Join(sharedDir, "bundles", c.dir)
		if _, err := bundle.DirDigest(dir); err != nil {
			t.Logf("skipping %s: %v", c.dir, err)
			continue
		}
		req := dirRequest(t, dir, c.ns)
		if c.examples != "" {
			req.Spec.Examples = []string{c.examples}
		}
		req.Spec.ImagePullSecrets = []string{"pull"}
		req.Spec.Patches = []kustomizetypes.Patch{{
			Target: &kustomizetypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: "Deployment"}}},
			Patch:  `[{"op": "add", "path": "/spec/template/metadata/labels/patched", "value": "yes"}]`,
		}}
		cases = append(cases, bundleCase{c.dir, req, 4})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Renderer{}
			rv, err := r.Resolve(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := r.Load(context.Background(), rv)
			if err != nil {
				t.Fatal(err)
			}
			outs := make([]*Result, c.n)
			errs := make([]error, c.n)
			var wg sync.WaitGroup
			for i := range c.n {
				wg.Go(func() { outs[i], errs[i] = RenderBundle(context.Background(), rv, b) })
			}
			wg.Wait()
			for i := range c.n {
				if errs[i] != nil {
					t.Fatalf("render %d: %v", i, errs[i])
				}
				if !reflect.DeepEqual(outs[i].Manifests, outs[0].Manifests) || !reflect.DeepEqual(outs[i].JSON, outs[0].JSON) {
					t.Fatalf("render %d differs from render 0", i)
				}
			}
			fresh, err := r.Load(context.Background(), rv)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b, fresh) {
				t.Error("rendering changed the loaded bundle")
			}
			// Render converts the bundle it loads in place
			// (convert.Options.OwnsBundle): the same bytes as a copy.
			owned, err := r.Render(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(owned.Manifests, outs[0].Manifests) || !reflect.DeepEqual(owned.JSON, outs[0].JSON) {
				t.Error("Render, which changes the bundle it loaded, differs from RenderBundle, which copies")
			}
		})
	}
}
