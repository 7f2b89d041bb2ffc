package convert

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// TestListsAreComplete fails when a Check*/Generate* function of the package
// is missing from Validators/Generators, so nothing is silently left out.
func TestListsAreComplete(t *testing.T) {
	declared := map[string][]string{}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				for _, prefix := range []string{"Check", "Generate"} {
					if strings.HasPrefix(fn.Name.Name, prefix) {
						declared[prefix] = append(declared[prefix], fn.Name.Name)
					}
				}
			}
		}
	}
	funcName := func(f any) string {
		full := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
		return full[strings.LastIndex(full, ".")+1:]
	}
	var listed = map[string][]string{}
	r := DefaultRenderer()
	for _, v := range r.Validators {
		listed["Check"] = append(listed["Check"], funcName(v))
	}
	for _, g := range r.Generators {
		listed["Generate"] = append(listed["Generate"], funcName(g.Generate))
	}
	for prefix, names := range declared {
		slices.Sort(names)
		got := slices.Sorted(slices.Values(listed[prefix]))
		if !slices.Equal(got, names) {
			t.Errorf("%s* functions %v, but the list holds %v", prefix, names, got)
		}
	}
	if len(r.Validators) != 17 || len(r.Generators) != 10 {
		t.Errorf("got %d validators and %d generators, want 17 and 10", len(r.Validators), len(r.Generators))
	}
	// The lists are values: changing one renderer's changes no other's.
	r.Validators[0], r.Generators[0].CopiesBundleObjects = nil, true
	if d := DefaultRenderer(); d.Validators[0] == nil || d.Generators[0].CopiesBundleObjects {
		t.Error("DefaultRenderer shares its lists")
	}
}

// brokenCSV starts from the webhook fixture and breaks one thing.
func brokenBundle(t *testing.T, breakIt func(b *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec)) *bundle.Bundle {
	t.Helper()
	b := fixture(t, "webhook-operator")
	b.CSV = b.CSV.DeepCopy()
	breakIt(b, &b.CSV.Spec)
	return b
}

func TestValidatorsRejectBrokenBundles(t *testing.T) {
	strategy := func(s *v1alpha1.ClusterServiceVersionSpec) *v1alpha1.StrategyDetailsDeployment {
		return &s.InstallStrategy.StrategySpec
	}
	for _, tc := range []struct {
		name    string
		breakIt func(*bundle.Bundle, *v1alpha1.ClusterServiceVersionSpec)
		want    []string // substrings of the error
	}{
		{"nil install strategy", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.InstallStrategy = v1alpha1.NamedInstallStrategy{}
			s.WebhookDefinitions = nil
		}, []string{"manifests/csv.yaml", "spec.install.spec.deployments", "at least one deployment"}},
		{"unknown strategy", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.InstallStrategy.StrategyName = "helm"
		}, []string{"spec.install.strategy", `"helm"`}},
		{"deployment without containers", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			strategy(s).DeploymentSpecs[0].Spec.Template.Spec.Containers = nil
		}, []string{"deployments[0].spec.template.spec.containers", "no containers"}},
		{"duplicate deployment", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			strategy(s).DeploymentSpecs = append(strategy(s).DeploymentSpecs, strategy(s).DeploymentSpecs[0])
		}, []string{"duplicate strategy deployment spec 'hooks.controller'"}},
		{"bad deployment name", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			strategy(s).DeploymentSpecs[0].Name = "Hooks_Controller"
		}, []string{"deployments[0].name", "invalid cluster service version strategy deployment name 'Hooks_Controller'", "non-existent deployment 'hooks.controller'"}},
		{"owned CRD missing", func(b *bundle.Bundle, _ *v1alpha1.ClusterServiceVersionSpec) {
			b.CRDs = nil
		}, []string{"spec.customresourcedefinitions.owned", "'gadgets.example.com' not found in bundle"}},
		{"duplicate CRD", func(b *bundle.Bundle, _ *v1alpha1.ClusterServiceVersionSpec) {
			b.CRDs = append(b.CRDs, b.CRDs[0])
		}, []string{"duplicate custom resource definition 'gadgets.example.com'"}},
		{"no package", func(b *bundle.Bundle, _ *v1alpha1.ClusterServiceVersionSpec) {
			b.Package = ""
		}, []string{"package name is empty"}},
		{"conversion webhook without AllNamespaces-only", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.InstallModes = append(s.InstallModes, v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true})
		}, []string{`conversion webhook "cgadget.example.com"`, "supports install modes AllNamespaces and OwnNamespace - ", "only support AllNamespaces"}},
		{"conversion webhook for a CRD not owned", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.WebhookDefinitions[2].ConversionCRDs = []string{"other.example.com"}
		}, []string{"conversionCRDs[0]", "'other.example.com' not owned"}},
		{"two conversion webhooks for one CRD", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			wh := s.WebhookDefinitions[2]
			wh.GenerateName = "c2.example.com"
			s.WebhookDefinitions = append(s.WebhookDefinitions, wh)
		}, []string{"conversion webhooks [c2.example.com,cgadget.example.com] reference same custom resource definition 'gadgets.example.com'"}},
		{"webhook without deployment", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.WebhookDefinitions[0].DeploymentName = "nope"
		}, []string{"webhookdefinitions[0].deploymentName", "non-existent deployment 'nope'"}},
		{"duplicate webhook", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.WebhookDefinitions = append(s.WebhookDefinitions, s.WebhookDefinitions[0])
		}, []string{"duplicate webhook 'vgadget.example.com' of type 'ValidatingAdmissionWebhook'"}},
		{"bad webhook name", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.WebhookDefinitions[1].GenerateName = "Bad Name"
		}, []string{"has invalid name 'Bad Name'"}},
		{"forbidden webhook rules", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.WebhookDefinitions[0].Rules = []admissionregistrationv1.RuleWithOperations{
				{Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}}},
				{Rule: admissionregistrationv1.Rule{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"ValidatingWebhookConfigurations"}}},
			}
		}, []string{`cannot reference API group "*"`, `cannot reference resource "ValidatingWebhookConfigurations"`}},
		{"webhook without sideEffects", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.WebhookDefinitions[0].SideEffects = nil
			s.WebhookDefinitions[1].AdmissionReviewVersions = nil
		}, []string{"webhookdefinitions[0].sideEffects", "webhookdefinitions[1].admissionReviewVersions"}},
		{"webhook of unknown type", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.WebhookDefinitions[0].Type = "Sideways"
		}, []string{`unknown type "Sideways"`}},
		{"API service", func(_ *bundle.Bundle, s *v1alpha1.ClusterServiceVersionSpec) {
			s.APIServiceDefinitions.Owned = []v1alpha1.APIServiceDescription{{Group: "metrics.example.com", Version: "v1", Kind: "Metric"}}
		}, []string{"apiservicedefinitions.owned[0]", "v1.metrics.example.com", "not supported"}},
		{"unsupported object", func(b *bundle.Bundle, _ *v1alpha1.ClusterServiceVersionSpec) {
			b.Others = append(b.Others, bundle.Object{File: "manifests/job.yaml", RNode: yaml.MustParse("apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\n")})
		}, []string{"manifests/job.yaml", `unsupported resource "migrate" with kind "Job"`}},
		{"object without kind", func(b *bundle.Bundle, _ *v1alpha1.ClusterServiceVersionSpec) {
			b.Others = append(b.Others, bundle.Object{File: "manifests/x.yaml", RNode: yaml.MustParse("metadata: {name: x}\n")}, bundle.Object{File: "manifests/nil.yaml"})
		}, []string{"manifests/x.yaml: object has no kind", "manifests/nil.yaml: empty object"}},
		{"v1beta1 CRD", func(b *bundle.Bundle, _ *v1alpha1.ClusterServiceVersionSpec) {
			b.CRDs[0].RNode = b.CRDs[0].Copy()
			b.CRDs[0].SetApiVersion("apiextensions.k8s.io/v1beta1")
		}, []string{"manifests/gadgets.yaml", "only apiextensions.k8s.io/v1 is supported"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := brokenBundle(t, tc.breakIt)
			_, err := Convert(b, Options{InstallNamespace: "h"})
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestConvertBadInputNeverPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *bundle.Bundle
		o    Options
		want string
	}{
		{"nil bundle", nil, Options{InstallNamespace: "x"}, "no ClusterServiceVersion"},
		{"nil CSV", &bundle.Bundle{Package: "p"}, Options{InstallNamespace: "x"}, "no ClusterServiceVersion"},
		{"no install namespace", fixture(t, "ownns-operator"), Options{}, "install namespace is required"},
		{"unknown cert provider", fixture(t, "ownns-operator"), Options{InstallNamespace: "x", CertProvider: "vault"}, `unknown certificate provider "vault"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Convert(tc.b, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, got %v", tc.want, err)
			}
		})
	}
	// Every generator and validator on an empty CSV: no panic.
	empty := &bundle.Bundle{CSV: &v1alpha1.ClusterServiceVersion{}, Others: []bundle.Object{{File: "f"}}, CRDs: []bundle.Object{{File: "g"}}}
	r := DefaultRenderer()
	for _, v := range r.Validators {
		v(empty)
	}
	for _, g := range r.Generators {
		_, _ = g.Generate(empty, Options{InstallNamespace: "x", TargetNamespaces: []string{""}})
	}
}

// FuzzConvertCSV feeds CSV documents to Convert: it may refuse them, never panic.
// `go test` runs the seeds; `go test -fuzz FuzzConvertCSV` explores further.
func FuzzConvertCSV(f *testing.F) {
	for _, seed := range []string{
		"spec: {}",
		"spec: {install: {strategy: deployment}}",
		"spec: {install: {strategy: deployment, spec: {deployments: []}}}",
		"spec: {install: {strategy: deployment, spec: {deployments: [{name: d}]}}, installModes: [{type: AllNamespaces, supported: true}]}",
		"spec: {installModes: [{type: AllNamespaces, supported: true}], install: {strategy: deployment, spec: {deployments: [{name: d, spec: {template: {spec: {containers: [{name: c}]}}}}]}}, webhookdefinitions: [{type: ValidatingAdmissionWebhook, generateName: w, deploymentName: d, sideEffects: None, admissionReviewVersions: [v1]}]}",
		"spec: {installModes: [{type: AllNamespaces, supported: true}], webhookdefinitions: [{type: ConversionWebhook, deploymentName: d, conversionCRDs: [a, a]}]}",
		"spec: {install: {spec: {permissions: [{rules: null}], clusterPermissions: [{serviceAccountName: \"\"}]}}}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		csv := &v1alpha1.ClusterServiceVersion{}
		if err := sigsyaml.Unmarshal([]byte(doc), csv); err != nil {
			return
		}
		csv.Name = "fuzz.v1"
		b := &bundle.Bundle{Package: "fuzz", CSV: csv, CSVFile: "manifests/csv.yaml"}
		_, _ = Convert(b, Options{InstallNamespace: "ns", CertProvider: CertManager})
		_, _ = Convert(b, Options{InstallNamespace: "ns", TargetNamespaces: []string{"a", "b"}})
	})
}

// TestWebhookWithoutPortDefaults443: a definition without containerPort gets
// the CSV schema's default instead of port 0.
func TestWebhookWithoutPortDefaults443(t *testing.T) {
	wh := v1alpha1.WebhookDescription{}
	if p := webhookServicePort(wh); p.Port != 443 || p.TargetPort != intstr.FromInt32(443) || p.Name != "443" {
		t.Errorf("got %+v", p)
	}
}
