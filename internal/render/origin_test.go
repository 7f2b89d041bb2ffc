package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quirkRequest is the demo's request over a copy of examples/demo with
// files written into it (paths relative to the application directory).
func quirkRequest(t *testing.T, files map[string]string) Request {
	t.Helper()
	req := demoRequest(t)
	req.SourceDir = extraDir(t, files)
	return req
}

// A Greeter the demo's own CRD refuses (an unknown field), for an extra
// manifest.
const refusedGreeter = "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata: {name: shipped}\nspec: {colour: red}\n"

// secretCRD and refusedSecret are what ack-secretsmanager-controller 1.4.1
// ships in manifests/: a CRD of kind Secret in its own group (OLM lets a
// bundle ship objects by kind name, and Secret is one), and a Secret of it
// without the field the CRD requires.
const (
	secretCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: secrets.vault.example.com}
spec:
  group: vault.example.com
  names: {kind: Secret, listKind: SecretList, plural: secrets, singular: secret}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [name]
            properties:
              name: {type: string}
              description: {type: string}
`
	refusedSecret = "apiVersion: vault.example.com/v1alpha1\nkind: Secret\nmetadata: {name: example}\nspec: {description: no name}\n"
)

// An object of the bundle's manifests/ that the API server would refuse
// names its file, and the fixes a user has for a vendor's file:
// spec.exclude, spec.excludeFiles (when the loader may skip the file),
// spec.patches. Never the extra manifests' or the examples' fixes. Each
// fix offered works.
func TestBundleObjectRefusedNamesItsFile(t *testing.T) {
	req := quirkRequest(t, map[string]string{
		"bundle/manifests/vault.example.com_secrets.yaml": secretCRD,
		"bundle/manifests/example_secret.yaml":            refusedSecret,
	})
	_, err := (&Renderer{}).Render(context.Background(), req)
	want := `Secret greeter-system/example (in the bundle file manifests/example_secret.yaml): spec.name: Required value: the bundle ships it so: leave it out with spec.exclude: ["vault.example.com/Secret/example"] (or its whole file with spec.excludeFiles: [manifests/example_secret.yaml]), or correct it with spec.patches`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	for _, bad := range []string{"extra manifest", "alm-example", "spec.examples"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("the fix mentions %s", bad)
		}
	}
	excluded := req
	excluded.Spec.Exclude = []string{"vault.example.com/Secret/example"}
	if find(parse(t, mustRender(t, excluded).YAML()), "Secret", "example") != nil {
		t.Error("spec.exclude kept the object")
	}
	skipped := req
	skipped.Spec.ExcludeFiles = []string{"manifests/example_secret.yaml"}
	if find(parse(t, mustRender(t, skipped).YAML()), "Secret", "example") != nil {
		t.Error("spec.excludeFiles kept the object")
	}
}

// A built-in object in the file of a CRD the CSV owns: the loader would
// refuse to skip that file, so spec.excludeFiles is not offered.
func TestBundleObjectInAnOwnedCRDsFile(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(demoDir, "bundle/manifests/greeter.example.com_greeters.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := "bundle/manifests/greeter.example.com_greeters.yaml"
	req := quirkRequest(t, map[string]string{file: string(crd) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeter-defaults}\nwrongfield: 1\n"})
	_, err = (&Renderer{}).Render(context.Background(), req)
	want := "ConfigMap greeter-system/greeter-defaults (in the bundle file manifests/greeter.example.com_greeters.yaml): wrongfield: unknown field: the API type has no such field, so the server would drop it or refuse the object: the bundle ships it so: leave it out with spec.exclude: [\"ConfigMap/greeter-defaults\"], or correct it with spec.patches"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
}

// An extra manifest the API server would refuse keeps its own wording: the
// user's file, to fix.
func TestExtraManifestRefusedKeepsItsFix(t *testing.T) {
	req := quirkRequest(t, map[string]string{"shipped.yaml": refusedGreeter})
	_, err := (&Renderer{}).Render(context.Background(), req)
	want := "Greeter shipped (in the extra manifest shipped.yaml): spec.colour: unknown field: the CRD's schema does not define it, so the API server would prune it: fix the custom resource in the extra manifest shipped.yaml, or change it with spec.patches"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
}

// An alm-example the API server would refuse keeps its own wording: it is
// rendered only because spec.examples names its kind.
func TestExampleRefusedKeepsItsFix(t *testing.T) {
	csvFile := "bundle/manifests/greeter-operator.clusterserviceversion.yaml"
	csv, err := os.ReadFile(filepath.Join(demoDir, csvFile))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(csv), `"spec": {"message"`, `"spec": {"colour": "red", "message"`, 1)
	if bad == string(csv) {
		t.Fatal("the demo's alm-example changed: update this test")
	}
	req := quirkRequest(t, map[string]string{csvFile: bad})
	_, err = (&Renderer{}).Render(context.Background(), req)
	want := `Greeter greeter-system/hello: spec.colour: unknown field: the CRD's schema does not define it, so the API server would prune it: fix the custom resource (the extra manifest, or with spec.patches); an alm-example is rendered only when spec.examples names its kind, so leave that kind out or add "Greeter/hello" to spec.exclude`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
}

// nlp-server 0.8.6's RoleBinding writes apiVersion twice, the same value
// both times: the bundle renders, the object holds it once (as OLM v1
// installs it), and a warning names the file and line.
func TestKeyRepeatedWithItsValueRenders(t *testing.T) {
	rb := "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: greeter-extra-binding\nsubjects:\n  - kind: ServiceAccount\n    name: greeter-operator\nroleRef:\n  kind: ClusterRole\n  name: view\n  apiGroup: rbac.authorization.k8s.io\napiVersion: rbac.authorization.k8s.io/v1\n"
	req := quirkRequest(t, map[string]string{"bundle/manifests/greeter-extra-binding.yaml": rb})
	res := mustRender(t, req)
	want := "manifests/greeter-extra-binding.yaml: line 12: apiVersion is set twice to the same value (first on line 1): rendered once, as OLM v1 installs it (the values are equal: the object is the same either way)"
	if len(res.Warnings) == 0 || res.Warnings[0] != want {
		t.Errorf("warnings:\n%s\nwant first:\n%s", strings.Join(res.Warnings, "\n"), want)
	}
	n := find(parse(t, res.YAML()), "RoleBinding", "greeter-extra-binding")
	if n == nil {
		t.Fatal("the RoleBinding is not rendered")
	}
	s, err := n.String()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(s, "apiVersion:") != 1 {
		t.Errorf("the RoleBinding still repeats apiVersion:\n%s", s)
	}
	for _, js := range res.JSON {
		if strings.Contains(js, `"name":"greeter-extra-binding"`) && strings.Count(js, `"apiVersion"`) != 1 {
			t.Errorf("the JSON the plugin sends repeats apiVersion: %s", js)
		}
	}
}

// The three vendor bundles of issue 26 (community-operators-prod), when
// ../shared/bundles holds them: nlp-server renders with its warning, the
// other two are refused naming their file and spec.exclude/excludeFiles.
func TestVendorQuirksOfSharedBundles(t *testing.T) {
	requireShared(t)
	for _, c := range []struct{ dir, ns, want string }{
		// upstream: operators/nlp-server/0.8.6, and so on
		{"nlp-server-0.8.6", "nlp-server", "manifests/nlp-server-role-binding.yaml: line 12: apiVersion is set twice to the same value (first on line 1): rendered once, as OLM v1 installs it (the values are equal: the object is the same either way)"},
		{"ack-secretsmanager-controller-1.4.1", "ack-secretsmanager-controller", `Secret ack-secretsmanager-controller/example (in the bundle file manifests/example_secretsmanager.services.k8s.aws_v1alpha1_secret.yaml): spec.name: Required value: the bundle ships it so: leave it out with spec.exclude: ["secretsmanager.services.k8s.aws/Secret/example"] (or its whole file with spec.excludeFiles: [manifests/example_secretsmanager.services.k8s.aws_v1alpha1_secret.yaml]), or correct it with spec.patches`},
		{"ecr-secret-operator-0.6.0", "ecr-secret-operator", `Secret ecr-secret-operator/ecr-secret (in the bundle file manifests/ecr-secret_ecr.mobb.redhat.com_v1alpha1_secret.yaml): spec.aws_iam_secret: unknown field: the CRD's schema does not define it, so the API server would prune it; spec.region: Required value: the bundle ships it so: leave it out with spec.exclude: ["ecr.mobb.redhat.com/Secret/ecr-secret"] (or its whole file with spec.excludeFiles: [manifests/ecr-secret_ecr.mobb.redhat.com_v1alpha1_secret.yaml]), or correct it with spec.patches`},
	} {
		t.Run(c.dir, func(t *testing.T) {
			dir := filepath.Join(sharedDir, "bundles", c.dir)
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("%s is not in ../shared/bundles (it comes from community-operators-prod, operators/<name>/<version>): %v", c.dir, err)
			}
			res, err := (&Renderer{}).Render(context.Background(), dirRequest(t, dir, c.ns))
			got := ""
			switch {
			case err != nil:
				got = err.Error()
			case len(res.Warnings) > 0:
				got = res.Warnings[0]
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}
