package safety

import (
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// crdYAML is a small CRD, widgets.example.com, whose version v1 has the
// schema of spec given as YAML (indented to sit under "spec:"). extraVersions
// are appended to spec.versions as written (indented as a list item).
func crdYAML(scope, specSchema, extraVersions string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: ` + scope + `
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
` + specSchema + extraVersions
}

// specSchema indents an object schema of spec's properties.
func specSchema(props string) string {
	var b strings.Builder
	b.WriteString("            type: object\n            properties:\n")
	for _, l := range strings.Split(strings.TrimRight(props, "\n"), "\n") {
		b.WriteString("              " + l + "\n")
	}
	return b.String()
}

// testBundle is a bundle of the given CSV name, version and CRDs (YAML).
func testBundle(t *testing.T, csvName, ver string, crds ...string) *bundle.Bundle {
	t.Helper()
	csv := &v1alpha1.ClusterServiceVersion{}
	csv.Name = csvName
	csv.Spec.Version = version.OperatorVersion{Version: semver.MustParse(ver)}
	b := &bundle.Bundle{Package: "widget", CSV: csv}
	for i, c := range crds {
		n, err := yaml.Parse(c)
		if err != nil {
			t.Fatalf("CRD %d: %v", i, err)
		}
		b.CRDs = append(b.CRDs, bundle.Object{File: "manifests/crd.yaml", RNode: n})
	}
	return b
}
