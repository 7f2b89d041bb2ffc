package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestRequirementsOfSharedBundles renders each of the 16 shared bundles with
// a default spec and checks its requirements report against hand-written
// expectations (read from the bundles' CSVs and metadata): each listed
// finding must be there, with its severity, and each listed absent one
// must not.
func TestRequirementsOfSharedBundles(t *testing.T) {
	requireShared(t)
	type exp struct {
		present map[string]requirements.Severity
		absent  []string
	}
	expect := map[string]exp{
		"leader-worker-set-1.0.0": {present: map[string]requirements.Severity{
			"image:${OPERATOR_IMAGE}":   requirements.Required, // containers[0].image and relatedImages
			"image:${OPERAND_IMAGE}":    requirements.Required, // RELATED_IMAGE_OPERAND_IMAGE
			"api:cert-manager.io":       requirements.Warning,
			"api:monitoring.coreos.com": requirements.Warning,
		}, absent: []string{"api:operator.openshift.io", "dependency:*"}}, // its own CRD ships the group
		"cert-manager-operator-1.20.0": {present: map[string]requirements.Severity{
			"image:openshift.io/cert-manager-operator:latest":       requirements.Warning,
			"api:config.openshift.io":                               requirements.Warning,
			"api:route.openshift.io":                                requirements.Warning,
			"api:console.openshift.io":                              requirements.Required, // ConsoleYAMLSample objects
			"openshift:config.openshift.io/inject-trusted-cabundle": requirements.Warning,
		}, absent: []string{"api:cert-manager.io", "certificates:*"}}, // ships the cert-manager CRDs; no webhooks
		"sailoperator-1.30.3": {present: map[string]requirements.Severity{
			"openshift:securitycontextconstraints": requirements.Warning,
			"api:k8s.cni.cncf.io":                  requirements.Warning,
		}, absent: []string{"image:*", "api:networking.istio.io", "api:security.openshift.io"}}, // the SCC finding stands for its group
		"eclipse-che-7.121.0": {present: map[string]requirements.Severity{
			"dependency:devworkspace-operator": requirements.Required,
			"certificates:cert-manager.io/v1":  requirements.Required, // webhooks, default provider
		}},
		"dbaas-operator-0.5.0": {present: map[string]requirements.Severity{
			"dependency:ack-rds-controller":                                      requirements.Required,
			"dependency:rh-service-binding-operator or service-binding-operator": requirements.Required,
		}},
		"loki-operator-0.11.0": {present: map[string]requirements.Severity{
			"openshift:service.beta.openshift.io/serving-cert-secret-name": requirements.Required, // metrics Service
			"api:monitoring.coreos.com":                                    requirements.Required, // ServiceMonitor object
		}},
	}
	dirs, _ := filepath.Glob(filepath.Join(sharedDir, "bundles", "*", "manifests"))
	if len(dirs) != 16 {
		t.Fatalf("expected the 16 shared bundles, found %d", len(dirs))
	}
	for _, m := range dirs {
		dir := filepath.Dir(m)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			req := dirRequest(t, dir, strings.SplitN(name, "-", 2)[0]+"-system")
			res, err := (&Renderer{}).Render(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]requirements.Finding{}
			for _, f := range res.Requirements {
				got[f.Key()] = f
				if f.Source == "" || f.Fix == "" || f.Message == "" {
					t.Errorf("%s: empty source, message or fix", f.Key())
				}
			}
			// Every pending finding is a render warning.
			for _, f := range requirements.Pending(res.Requirements) {
				if !containsLine(res.Warnings, f.Line()) {
					t.Errorf("finding %s is not among the warnings", f.Key())
				}
			}
			e := expect[name]
			for key, sev := range e.present {
				f, ok := got[key]
				if !ok {
					t.Errorf("missing finding %s; got %v", key, keys(got))
					continue
				}
				if f.Severity != sev {
					t.Errorf("%s: severity %s, want %s", key, f.Severity, sev)
				}
			}
			for _, pattern := range e.absent {
				for k := range got {
					// Its key alone: not what an SCC finding stands for.
					if requirements.Accepts([]string{pattern}, requirements.Finding{Category: got[k].Category, Subject: got[k].Subject}) {
						t.Errorf("unexpected finding %s", k)
					}
				}
			}
		})
	}
}

func containsLine(lines []string, l string) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

func keys(m map[string]requirements.Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSeedExamplesPassStrict renders examples/<op>/olm-cmp.yaml with its
// bundle from ../shared in place of the registry image: the spec answers
// every finding, so a strict render passes. Without the spec's answers, the
// same strict render fails.
func TestSeedExamplesPassStrict(t *testing.T) {
	requireShared(t)
	for example, b := range seedExampleBundles {
		t.Run(example, func(t *testing.T) {
			src := filepath.Join("..", "..", "examples", example)
			f, err := spec.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			abs, err := filepath.Abs(filepath.Join(sharedDir, "bundles", b))
			if err != nil {
				t.Fatal(err)
			}
			req := Request{Spec: f.Spec, Name: f.Metadata.Name, SourceDir: src}
			req.Spec.Bundle, req.Spec.Version, req.Spec.Strict = abs, "", true
			res, err := (&Renderer{}).Render(context.Background(), req)
			if err != nil {
				t.Fatalf("strict render of examples/%s: %v", example, err)
			}
			if len(res.Requirements) == 0 {
				t.Error("the report lists accepted findings too: expected some")
			}
			req.Spec.Accept, req.Spec.ClusterAPIs = nil, nil
			if _, err := (&Renderer{}).Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), "strict:") {
				t.Errorf("without accept and clusterAPIs the strict render must fail, got %v", err)
			}
		})
	}
}
