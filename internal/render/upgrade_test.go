package render

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// pushDemoVersion pushes the demo bundle as version v (see
// bundletest.PushDemoVersion).
func pushDemoVersion(t *testing.T, host, v, replaces string, crdEdits ...string) {
	t.Helper()
	bundletest.PushDemoVersion(t, host, filepath.Join(demoDir, "bundle"), v, replaces, crdEdits...)
}

func TestUpgradeFromImage(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	pushDemoVersion(t, host, "0.1.0", "greeter-operator.v0.0.9")
	pushDemoVersion(t, host, "0.2.0", "greeter-operator.v0.1.0")
	// Unsafe: replicas becomes a string and message gains a pattern.
	pushDemoVersion(t, host, "0.3.0", "greeter-operator.v0.2.0",
		"replicas:\n                type: integer", "replicas:\n                type: string",
		"message:\n                type: string", "message:\n                type: string\n                pattern: '^[a-z]+$'")
	// Safe, but no edge from 0.1.0.
	pushDemoVersion(t, host, "0.2.1", "greeter-operator.v0.2.0")
	r := &Renderer{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}}
	request := func(to, from string, strict bool, policy string) Request {
		req := demoRequest(t)
		req.Spec.Bundle, req.Spec.Version = host+"/demo/greeter-bundle", "v"+to
		req.Spec.UpgradeFrom, req.Spec.Strict, req.Spec.UpgradeConstraintPolicy = "v"+from, strict, policy
		if strict {
			req.Spec.ClusterAPIs = []string{"cert-manager.io/v1"} // the demo's one requirement
		}
		return req
	}
	const noEdge = "no upgrade edge from greeter-operator.v0.1.0 to greeter-operator.v0.2.1: greeter-operator.v0.2.1 replaces greeter-operator.v0.2.0, skips (none) and has olm.skipRange (none), none of which includes greeter-operator.v0.1.0 (0.1.0)"
	for _, tc := range []struct {
		name, from, to string
		strict         bool
		policy         string
		wantErr        []string // lines the error holds; nil: renders
		wantWarning    string   // the one render warning of the upgrade, whole; "": none
	}{
		{name: "safe bump", from: "0.1.0", to: "0.2.0"},
		{name: "safe bump, SelfCertified", from: "0.1.0", to: "0.2.0", policy: spec.UpgradeSelfCertified},
		{name: "unsafe bump", from: "0.2.0", to: "0.3.0", wantErr: []string{
			`spec.upgradeFrom "v0.2.0": the upgrade from greeter-operator.v0.2.0 to greeter-operator.v0.3.0 is unsafe`,
			"\nerror: pattern: CRD greeters.greeter.example.com version v1alpha1 path .spec.message: ",
			"\nerror: type: CRD greeters.greeter.example.com version v1alpha1 path .spec.replicas: ",
		}},
		// OLM v1's default, CatalogProvided: one line, the fixes named.
		{name: "no edge", from: "0.1.0", to: "0.2.1", wantErr: []string{`spec.upgradeFrom "v0.1.0": ` + noEdge + "; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: first render a version whose CSV replaces or skips greeter-operator.v0.1.0 or has an olm.skipRange holding 0.1.0, or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself"}},
		{name: "no edge, CatalogProvided written out", from: "0.1.0", to: "0.2.1", policy: spec.UpgradeCatalogProvided, wantErr: []string{`spec.upgradeFrom "v0.1.0": ` + noEdge + "; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: "}},
		{name: "no edge, SelfCertified", from: "0.1.0", to: "0.2.1", policy: spec.UpgradeSelfCertified,
			wantWarning: "the upgrade from greeter-operator.v0.1.0 to greeter-operator.v0.2.1: upgradeEdge: " + noEdge + "; allowed as spec.upgradeConstraintPolicy is SelfCertified (you have checked this upgrade yourself; OLM v1 installs it then too)"},
		// strict does not overrule the policy the spec states.
		{name: "no edge, SelfCertified, strict", from: "0.1.0", to: "0.2.1", policy: spec.UpgradeSelfCertified, strict: true,
			wantWarning: "the upgrade from greeter-operator.v0.1.0 to greeter-operator.v0.2.1: upgradeEdge: " + noEdge + "; allowed as spec.upgradeConstraintPolicy is SelfCertified (you have checked this upgrade yourself; OLM v1 installs it then too)"},
		{name: "down a version", from: "0.2.0", to: "0.1.0", wantErr: []string{`spec.upgradeFrom "v0.2.0": greeter-operator.v0.1.0 (0.1.0) is older than greeter-operator.v0.2.0 (0.2.0): OLM never goes down a version by itself`, "render 0.2.0 or a newer version, or set spec.upgradeConstraintPolicy: SelfCertified"}},
		{name: "FROM not published", from: "0.0.1", to: "0.2.0", wantErr: []string{`spec.upgradeFrom "v0.0.1": `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Render(context.Background(), request(tc.to, tc.from, tc.strict, tc.policy))
			if tc.wantErr != nil {
				if err == nil {
					t.Fatal("rendered; want an error")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if strings.HasPrefix(tc.name, "no edge") && strings.Contains(err.Error(), "\n") {
					t.Errorf("the edge alone spreads over several lines:\n%v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var upgrade []string
			for _, w := range res.Warnings {
				if strings.Contains(w, "the upgrade from") || strings.Contains(w, "upgradeEdge") {
					upgrade = append(upgrade, w)
				}
			}
			switch {
			case tc.wantWarning == "" && len(upgrade) > 0:
				t.Errorf("unexpected upgrade warnings: %q", upgrade)
			case tc.wantWarning != "" && (len(upgrade) != 1 || upgrade[0] != tc.wantWarning):
				t.Errorf("upgrade warnings %q, want one:\n%s", upgrade, tc.wantWarning)
			}
			for _, w := range upgrade {
				// The CLI prints "warning: " before it: once is enough.
				if strings.Contains(w, "warning:") {
					t.Errorf("the warning says warning: again: %q", w)
				}
			}
			// Provenance: the version and the digest of what was rendered.
			y := string(res.YAML())
			if !strings.Contains(y, AnnotationDigest+": '"+res.Origin.Digest+"'") || !strings.Contains(y, AnnotationPackage+": 'greeter-operator@"+tc.to+"'") {
				t.Errorf("provenance annotations lack digest %s or version %s:\n%s", res.Origin.Digest, tc.to, res.Manifests[0])
			}
		})
	}
}

func TestUpgradeFromDirectoryBundle(t *testing.T) {
	req := demoRequest(t)
	req.Spec.UpgradeFrom = "0.1.0"
	_, err := (&Renderer{}).Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), `spec.upgradeFrom "0.1.0" needs an image or catalog bundle: spec.bundle "./bundle" is a directory`) {
		t.Fatalf("got %v, want the directory refusal", err)
	}
}

func TestUpgradeFromCatalog(t *testing.T) {
	e := newCatalogEnv(t)
	const (
		selfCertified = "; allowed as spec.upgradeConstraintPolicy is SelfCertified (you have checked this upgrade yourself; OLM v1 installs it then too)"
		refused       = "; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: "
	)
	for _, tc := range []struct {
		name, from, rng, channel, policy string
		wantErr                          string // the whole error; "": renders
		wantWarning                      string // the upgrade's one warning, whole; "": none
	}{
		// stable: 0.1.0 -> 0.2.0 is an edge.
		{name: "edge in the channel", from: "0.1.0", rng: "0.2.0", channel: "stable"},
		{name: "edge in the channel, SelfCertified", from: "0.1.0", rng: "0.2.0", channel: "stable", policy: spec.UpgradeSelfCertified},
		// FROM loads from any channel, but the edge is judged in TO's
		// channel: fast lists no 0.1.0.
		{name: "FROM in another channel", from: "0.1.0", rng: "0.2.0", channel: "fast",
			wantErr: `spec.upgradeFrom "0.1.0": no upgrade edge from greeter-operator.v0.1.0 to greeter-operator.v0.2.0: no path through replaces, skips or skipRange in channel fast of the catalog's package greeter-operator` + refused + "first render a version the catalog upgrades 0.1.0 to (it lists none in channel fast), or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself"},
		// fast goes 0.2.0 -> 1.0.0, stable never reaches 1.0.0; 0.1.0's
		// successor is 0.2.0 (stable).
		{name: "no path in one channel", from: "0.1.0", rng: "1.0.0",
			wantErr: `spec.upgradeFrom "0.1.0": no upgrade edge from greeter-operator.v0.1.0 to greeter-operator.v1.0.0: no path through replaces, skips or skipRange in any channel of the catalog's package greeter-operator` + refused + "first render a version the catalog upgrades 0.1.0 to (0.2.0), or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself"},
		{name: "no path in one channel, SelfCertified", from: "0.1.0", rng: "1.0.0", policy: spec.UpgradeSelfCertified,
			wantWarning: "the upgrade from greeter-operator.v0.1.0 to greeter-operator.v1.0.0: upgradeEdge: no upgrade edge from greeter-operator.v0.1.0 to greeter-operator.v1.0.0: no path through replaces, skips or skipRange in any channel of the catalog's package greeter-operator" + selfCertified},
		// Acknowledging the finding passes it too, as every safety
		// finding: shown with its reason.
		{name: "no path in one channel, acknowledged", from: "0.1.0", rng: "1.0.0",
			wantWarning: "the upgrade from greeter-operator.v0.1.0 to greeter-operator.v1.0.0: error: upgradeEdge: no upgrade edge from greeter-operator.v0.1.0 to greeter-operator.v1.0.0: no path through replaces, skips or skipRange in any channel of the catalog's package greeter-operator" + refused + "first render a version the catalog upgrades 0.1.0 to (0.2.0), or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself (acknowledged: tested on staging)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := e.request(t, "./catalog", tc.rng, tc.channel)
			req.Spec.UpgradeFrom, req.Spec.UpgradeConstraintPolicy = tc.from, tc.policy
			if strings.HasSuffix(tc.name, "acknowledged") {
				req.Spec.Acknowledge = []spec.Acknowledgement{{Rule: "upgradeEdge", Reason: "tested on staging"}}
			}
			res, err := e.render(t, req)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("got %v\nwant %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range res.Warnings {
				if strings.Contains(w, "upgradeEdge") {
					got = append(got, w)
				}
			}
			if tc.wantWarning == "" && len(got) > 0 || tc.wantWarning != "" && (len(got) != 1 || got[0] != tc.wantWarning) {
				t.Errorf("upgrade warnings %q\nwant %q", got, tc.wantWarning)
			}
		})
	}
}

// TestCheckUpgradeDirectories judges two directory bundles with TO's spec:
// its keepCRDs decides whether a dropped CRD is an error.
func TestCheckUpgradeDirectories(t *testing.T) {
	src := t.TempDir()
	copyTree(t, demoDir, filepath.Join(src, "from"))
	copyTree(t, demoDir, filepath.Join(src, "to"))
	if err := os.Remove(filepath.Join(src, "to", "bundle", "manifests", "greeter.example.com_greeters.yaml")); err != nil {
		t.Fatal(err)
	}
	from, to := demoRequest(t), demoRequest(t)
	from.SourceDir, to.SourceDir = filepath.Join(src, "from"), filepath.Join(src, "to")
	to.Spec.Examples = nil // the examples' CRD is gone
	for _, keep := range []bool{true, false} {
		to.Spec.KeepCRDs = &keep
		r := &Renderer{}
		load := func(req Request) (Resolved, *bundle.Bundle) {
			rv, err := r.Resolve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := r.Load(context.Background(), rv)
			if err != nil {
				t.Fatal(err)
			}
			return rv, b
		}
		_, fb := load(from)
		trv, tb := load(to)
		got, _, err := r.CheckUpgrade(context.Background(), trv, fb, tb)
		if err != nil {
			t.Fatal(err)
		}
		want := "warning: crdRemoved: CRD greeters.greeter.example.com: "
		if !keep {
			want = "error: crdRemoved: CRD greeters.greeter.example.com: "
		}
		if len(got) != 1 || !strings.HasPrefix(got[0].String(), want) {
			t.Errorf("keepCRDs %v: got %v, want one finding %q…", keep, got, want)
		}
	}
}

// countingPuller records the references catalog images are pulled by.
type countingPuller struct {
	*bundle.ImageLoader
	pulls []string
}

func (p *countingPuller) LoadCatalog(ctx context.Context, ref string) (fs.FS, bundle.Origin, error) {
	p.pulls = append(p.pulls, ref)
	return p.ImageLoader.LoadCatalog(ctx, ref)
}

// TestUpgradeFromCatalogImagePulledOnce: TO, FROM and the upgrade edge come
// from one catalog: its tag is asked for once per render, and the edge check
// reads the digest that tag named.
func TestUpgradeFromCatalogImagePulledOnce(t *testing.T) {
	e := newCatalogEnv(t)
	catalogDigest := bundletest.Push(t, e.host, "demo/catalog", "latest",
		bundletest.CatalogImage(t, filepath.Join(e.sourceDir, "catalog"), "/configs"))
	ref := e.host + "/demo/catalog:latest"
	req := e.request(t, ref, "0.2.0", "stable")
	req.Spec.UpgradeFrom = "0.1.0"
	p := &countingPuller{ImageLoader: e.loader}
	res, err := (&Renderer{Loader: p}).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "0.2.0" {
		t.Errorf("rendered %s, want 0.2.0", res.Version)
	}
	want := []string{ref, e.host + "/demo/catalog@" + catalogDigest}
	if !slices.Equal(p.pulls, want) {
		t.Errorf("catalog pulls %q, want %q (the tag once, then its digest)", p.pulls, want)
	}
}

// TestUpgradeFromAcknowledged: spec.acknowledge entries pass the errors they
// name, exactly (rule, CRD, version, path), and show with their reason; an
// entry that names no finding is a warning, an error under strict.
func TestUpgradeFromAcknowledged(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	pushDemoVersion(t, host, "0.2.0", "greeter-operator.v0.1.0")
	pushDemoVersion(t, host, "0.3.0", "greeter-operator.v0.2.0",
		"default: 1", "default: 2\n                maximum: 100")
	r := &Renderer{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}}
	pattern := spec.Acknowledgement{Rule: "maximum", CRD: "greeters.greeter.example.com", Version: "v1alpha1", Path: ".spec.replicas", Reason: "we run one replica"}
	typ := spec.Acknowledgement{Rule: "default", CRD: "greeters.greeter.example.com", Version: "v1alpha1", Path: ".spec.replicas", Reason: "every CR sets replicas"}
	stale := spec.Acknowledgement{Rule: "type", CRD: "greeters.greeter.example.com", Version: "v1alpha1", Path: ".spec.size", Reason: "old"}
	render := func(strict bool, acks ...spec.Acknowledgement) (*Result, error) {
		req := demoRequest(t)
		req.Spec.Bundle, req.Spec.Version, req.Spec.UpgradeFrom = host+"/demo/greeter-bundle", "v0.3.0", "v0.2.0"
		req.Spec.Acknowledge, req.Spec.Strict = acks, strict
		return r.Render(context.Background(), req)
	}
	const what = "the upgrade from greeter-operator.v0.2.0 to greeter-operator.v0.3.0: "

	// One of the two errors acknowledged: the other still fails the render.
	_, err := render(false, pattern)
	if err == nil || !strings.Contains(err.Error(), "\nerror: default: CRD greeters.greeter.example.com version v1alpha1 path .spec.replicas: ") ||
		!strings.Contains(err.Error(), " (acknowledged: we run one replica)") {
		t.Errorf("one acknowledged of two: %v", err)
	}

	res, err := render(false, typ, pattern, stale)
	if err != nil {
		t.Fatalf("both acknowledged: %v", err)
	}
	var got []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "acknowledge") {
			got = append(got, w)
		}
	}
	want := []string{
		`spec.acknowledge[2] "type greeters.greeter.example.com v1alpha1 .spec.size" matched no safety finding of this upgrade: remove it (it was for another bump, or the finding's rule, crd, version or path differ)`,
	}
	for _, f := range []string{"maximum: CRD greeters.greeter.example.com version v1alpha1 path .spec.replicas", "default: CRD greeters.greeter.example.com version v1alpha1 path .spec.replicas"} {
		i := slices.IndexFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, what+"error: "+f+": ") })
		if i < 0 {
			t.Errorf("no warning for the acknowledged %s in %q", f, res.Warnings)
			continue
		}
		want = append(want, res.Warnings[i])
	}
	if len(got) != 3 || got[0] != want[0] || !strings.HasSuffix(want[1], " (acknowledged: we run one replica)") || !strings.HasSuffix(want[2], " (acknowledged: every CR sets replicas)") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Under strict the stale entry is the error.
	if _, err := render(true, typ, pattern, stale); err == nil || !strings.Contains(err.Error(), `strict: spec.acknowledge[2] "type greeters.greeter.example.com v1alpha1 .spec.size" matched no safety finding of this upgrade`) {
		t.Errorf("strict, a stale entry: %v", err)
	}
}
