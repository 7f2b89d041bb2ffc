package tenancy_test

import (
	"context"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
)

// BenchmarkPolicyCheck measures what the tenancy policy adds to one render
// of team B's private image by digest (go-containerregistry's registry on
// loopback, basic auth):
//   - admission: the project's renderer (policy of the moment, entry
//     match, gate) and the image's admission: every render pays it;
//   - access-cold: a manifest HEAD with the project's own credentials, as
//     the first render of an image another project pulled pays it (once per
//     tenancy.AccessTTL);
//   - access-cached: the same within AccessTTL.
//
// BenchmarkRenderHit compares a render served from the engine's cache with
// and without the policy.
func BenchmarkPolicyCheck(b *testing.B) {
	w := newWorld(b)
	p, err := tenancy.Load(w.policyFile)
	if err != nil {
		b.Fatal(err)
	}
	w.rs.Policy = func() (*tenancy.Policy, error) { return p, nil } // the reloaded file: a stat, measured apart
	ref := w.regB + "/team-b/op@" + w.digestB
	ctx := context.Background()
	b.Run("admission", func(b *testing.B) {
		for b.Loop() {
			_, t, err := w.rs.For("team-b")
			if err != nil {
				b.Fatal(err)
			}
			if err := t.Image(render.RoleBundle, "spec.bundle", ref); err != nil {
				b.Fatal(err)
			}
		}
	})
	tn, err := p.Tenant("team-b")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("access-cold", func(b *testing.B) {
		for b.Loop() {
			g := tenancy.NewGate(p, tn.Entry, w.base)
			if _, err := g.For(tn).Resolve(ctx, ref); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("access-cached", func(b *testing.B) {
		l := tenancy.NewGate(p, tn.Entry, w.base).For(tn)
		if _, err := l.Resolve(ctx, ref); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := l.Resolve(ctx, ref); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("load-policy", func(b *testing.B) {
		// What a policy edit costs once: serve loads the file again only
		// when its stat changed.
		for b.Loop() {
			if _, err := tenancy.Load(w.policyFile); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRenderHit(b *testing.B) {
	w := newWorld(b)
	p, err := tenancy.Load(w.policyFile)
	if err != nil {
		b.Fatal(err)
	}
	w.rs.Policy = func() (*tenancy.Policy, error) { return p, nil } // serve reloads only when the file changed
	ref := w.regB + "/team-b/op@" + w.digestB
	req := render.Request{Spec: spec.Spec{Bundle: ref, Namespace: "demo-system"}, Name: "demo", Project: "team-b"}
	plain := engine.NewEngine(engine.EngineOptions{Loader: w.base})
	for name, e := range map[string]*engine.Engine{"without-policy": plain, "with-policy": w.eng} {
		b.Run(name, func(b *testing.B) {
			if _, _, err := e.Render(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, info, err := e.Render(context.Background(), req); err != nil || info.Cache != "hit" {
					b.Fatal(err, info.Cache)
				}
			}
		})
	}
}
