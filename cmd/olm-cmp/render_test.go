package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/inspect"
)

// run executes the CLI in-process and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append(args, "--cache-dir", t.TempDir()))
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestRenderDemo(t *testing.T) {
	out, _, err := run(t, "render", "../../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Namespace", "name: greeter-system", "kind: Deployment", "kind: Greeter", "argocd.argoproj.io/sync-wave"} {
		if !strings.Contains(out, want) {
			t.Errorf("render output lacks %q", want)
		}
	}
}

func TestRenderFlagsOverrideSpec(t *testing.T) {
	out, _, err := run(t, "render", "../../examples/demo", "-n", "other-ns", "--image-pull-secret", "a", "--image-pull-secret", "b",
		"--exclude", "ValidatingWebhookConfiguration", "--certificate-provider", "none", "--watch-namespace", "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "greeter-system") || !strings.Contains(out, "namespace: other-ns") {
		t.Error("-n did not replace spec.namespace")
	}
	if strings.Contains(out, "registry-pull-secret") || !strings.Contains(out, "- name: a") || !strings.Contains(out, "- name: b") {
		t.Error("--image-pull-secret did not replace spec.imagePullSecrets")
	}
	if strings.Contains(out, "kind: ValidatingWebhookConfiguration") || strings.Contains(out, "kind: Certificate\n") {
		t.Error("--exclude / --certificate-provider none not applied")
	}
	// --watch-namespace "" means all namespaces: ClusterRoles instead of Roles.
	if !strings.Contains(out, "olm.targetNamespaces: \"\"") && !strings.Contains(out, "olm.targetNamespaces: ''") {
		t.Error("--watch-namespace '' did not select all namespaces")
	}
}

func TestRenderErrorWritesNothingToStdout(t *testing.T) {
	dir := t.TempDir()
	spec := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./missing\n  namespace: x\n  imagePullSecret: [typo]\n"
	if err := os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "render", dir)
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.imagePullSecret"`) {
		t.Fatalf("want the unknown-key error, got %v", err)
	}
	if out != "" {
		t.Errorf("stdout must be empty on error, got %q", out)
	}
	out, _, err = run(t, "render", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "olm-cmp.yaml not found") || out != "" {
		t.Errorf("missing spec: err=%v stdout=%q", err, out)
	}
}

// Every command that reads a source directory takes DIR/olm-cmp.yaml as
// well, and names a directory that does not exist as missing.
func TestCommandsTakeTheSpecFile(t *testing.T) {
	want, _, err := run(t, "render", "../../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"render", "../../examples/demo/olm-cmp.yaml"},
		{"generate", "../../examples/demo/olm-cmp.yaml"},
	} {
		out, _, err := run(t, args...)
		if err != nil || out != want {
			t.Errorf("%q: %v (output differs from rendering the directory: %v)", args, err, out != want)
		}
	}
	if out, _, err := run(t, "diff", "../../examples/demo/olm-cmp.yaml", "../../examples/demo"); err != nil || !strings.Contains(out, "# no changes") {
		t.Errorf("diff DIR/olm-cmp.yaml: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"render"}, {"generate"}, {"diff", "-n", "x"}, {"resolve"}} {
		_, _, err := run(t, append(args, "examples/lws")...)
		if err == nil || err.Error() != "examples/lws: no such directory" {
			t.Errorf("%s of a missing directory: %v", args[0], err)
		}
	}
}

// Every problem of the file at once, judged on the spec the flags make: a
// flag that supplies the missing namespace silences that line only.
func TestRenderReportsEveryProblemWithTheFlags(t *testing.T) {
	dir := t.TempDir()
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  imagePullSecret: [x]\n  certificateProvider: vault\n"
	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(doc), 0o644)
	file := filepath.Join(dir, "olm-cmp.yaml")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, file + `: line 5: unknown field "spec.imagePullSecret": did you mean imagePullSecrets?
spec.namespace is required: the namespace the operator is installed in
` + file + `: line 6: spec.certificateProvider "vault": must be one of cert-manager, service-ca, none`},
		{[]string{"-n", "ops", "--certificate-provider", "none"}, file + `: line 5: unknown field "spec.imagePullSecret": did you mean imagePullSecrets?`},
	} {
		_, _, err := run(t, append([]string{"render", dir}, tc.flags...)...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("flags %q: want\n%s\ngot\n%v", tc.flags, tc.want, err)
		}
	}
}

// YAML 1.1 reads y, no, on and off as booleans; a string field of
// olm-cmp.yaml takes them as written.
func TestRenderTakesStringsAsWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	badinput.CopyDir(t, "../../examples/demo", dir)
	data, _ := os.ReadFile(filepath.Join(dir, "olm-cmp.yaml"))
	data = []byte(strings.ReplaceAll(string(data), "greeter-system", "y"))
	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), data, 0o644)
	out, _, err := run(t, "render", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "kind: Namespace\nmetadata:\n  name: y\n") && !strings.Contains(out, "  name: \"y\"\n") && !strings.Contains(out, "  name: 'y'\n") {
		t.Errorf("namespace y not rendered as written:\n%.600s", out)
	}
}

func TestRenderWithoutSpecFile(t *testing.T) {
	abs, _ := filepath.Abs("../../examples/demo/bundle")
	out, _, err := run(t, "render", t.TempDir(), "--bundle", abs, "-n", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "namespace: demo") {
		t.Error("--bundle and -n alone should render")
	}
}

func TestInspect(t *testing.T) {
	out, _, err := run(t, "inspect", "../../examples/demo/bundle")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"greeter-operator", "0.2.0", "OwnNamespace", "greeters.greeter.example.com", "ValidatingAdmissionWebhook", "greeter-operator.v0.1.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, "inspect", "../../examples/demo/bundle", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var s inspect.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Package != "greeter-operator" || len(s.CRDs) != 1 || s.CRDs[0].Bytes == 0 {
		t.Errorf("json summary wrong (%v): %+v", err, s)
	}
}

// The demo bundle has a webhook and the default provider is cert-manager:
// its report names cert-manager.io/v1, in text and JSON; --strict fails on
// it after printing, and the demo's source directory (its spec) is reported
// as the spec renders it.
func TestInspectRequirements(t *testing.T) {
	out, _, err := run(t, "inspect", "../../examples/demo/bundle")
	if err != nil || !strings.Contains(out, "Requirements (") || !strings.Contains(out, "certificates:cert-manager.io/v1") {
		t.Fatalf("text report lacks certificates:cert-manager.io/v1 (%v):\n%s", err, out)
	}
	out, _, err = run(t, "inspect", "../../examples/demo", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var s inspect.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range s.Requirements {
		found = found || f.Key() == "certificates:cert-manager.io/v1" && f.Severity == "required" && f.Fix != ""
	}
	if !found {
		t.Errorf("json requirements lack certificates:cert-manager.io/v1: %+v", s.Requirements)
	}
	// The message says where the list is: above in text, in the JSON's
	// requirements on stdout (where every finding has accepted).
	for _, c := range []struct{ output, says string }{
		{"text", "(listed above)"},
		{"json", `"accepted": false`},
	} {
		_, _, err := run(t, "inspect", "../../examples/demo/bundle", "--strict", "-o", c.output)
		if err == nil || !strings.Contains(err.Error(), "strict:") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("-o %s --strict: must fail on a pending finding saying %q, got %v", c.output, c.says, err)
		}
	}
	if !strings.Contains(out, `"accepted": false`) {
		t.Errorf("json requirements must always say accepted:\n%s", out)
	}
}

// TestRenderBundleDirFlag: --bundle DIR is relative to the working directory
// and clears spec.version, which only an image reference takes.
func TestRenderBundleDirFlag(t *testing.T) {
	src := t.TempDir()
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: quay.io/example/greeter-bundle\n  version: v0.2.0\n  namespace: demo\n"
	os.WriteFile(filepath.Join(src, "olm-cmp.yaml"), []byte(doc), 0o644)
	for _, ref := range []string{"../../examples/demo/bundle", "./../../examples/demo/bundle"} {
		out, stderr, err := run(t, "render", src, "--bundle", ref)
		if err != nil || !strings.Contains(out, "name: greeter-operator-controller") {
			t.Errorf("render --bundle %s: %v\n%s%.300s", ref, err, stderr, out)
		}
	}
	// An explicit --version still applies, and is refused for a directory.
	if _, _, err := run(t, "render", src, "--bundle", "../../examples/demo/bundle", "--version", "v0.2.0"); err == nil || !strings.Contains(err.Error(), "only image references take a version") {
		t.Errorf("--bundle DIR --version V: %v", err)
	}
	if _, _, err := run(t, "render", src, "--bundle", "./nonexist"); err == nil || err.Error() != "--bundle ./nonexist: no such directory (a path is relative to the working directory)" {
		t.Errorf("--bundle ./nonexist: %v", err)
	}
}

// TestRenderAPIVersions: --api-versions, else KUBE_API_VERSIONS, says what
// the cluster serves, as the plugin's KUBE_API_VERSIONS does.
func TestRenderAPIVersions(t *testing.T) {
	const vanilla = "v1,apps/v1,rbac.authorization.k8s.io/v1,apiextensions.k8s.io/v1,admissionregistration.k8s.io/v1"
	const noCertManager = "the cluster does not serve cert-manager.io/v1"
	// What Argo CD sends for a cluster with cert-manager: every group/version
	// and, for each, the group/version/Kind of every kind it serves (here the
	// kinds the demo renders).
	const argoCDList = vanilla + ",cert-manager.io/v1,v1/ConfigMap,v1/Namespace,v1/Service,v1/ServiceAccount,apps/v1/Deployment," +
		"rbac.authorization.k8s.io/v1/ClusterRole,rbac.authorization.k8s.io/v1/ClusterRoleBinding,rbac.authorization.k8s.io/v1/Role,rbac.authorization.k8s.io/v1/RoleBinding," +
		"apiextensions.k8s.io/v1/CustomResourceDefinition,admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration,cert-manager.io/v1/Certificate,cert-manager.io/v1/Issuer"
	want, _, err := run(t, "render", "../../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, env string
		args      []string
		err       string
	}{
		{"flag without cert-manager", "", []string{"--api-versions", vanilla}, noCertManager},
		{"flag with cert-manager", "", []string{"--api-versions", vanilla + ",cert-manager.io/v1"}, ""},
		{"env without cert-manager", vanilla, nil, noCertManager},
		{"the flag wins over the env", vanilla, []string{"--api-versions", vanilla + ",cert-manager.io/v1"}, ""},
		{"diff: both sides", "", []string{"--api-versions", vanilla, "--namespace", "moved"}, noCertManager},
		{"a typo is refused", "", []string{"--api-versions", vanilla + ",cert-manager.io/v1/x"}, `--api-versions "cert-manager.io/v1/x": not a group/version`},
		// Argo CD's KUBE_API_VERSIONS lists group/version/Kind entries too:
		// the flag takes a copy of it, as the variable is read.
		{"Argo CD's group/version/Kind entries", "", []string{"--api-versions", argoCDList}, ""},
		{"a Kind entry without a version is refused", "", []string{"--api-versions", vanilla + ",apps/Deployment"}, `--api-versions "apps/Deployment": not a group/version`},
		{"diff: a typo is refused", "", []string{"--api-versions", "apps/", "--namespace", "moved"}, `--api-versions "apps/": not a group/version`},
		// A partial list (as docs once showed it) would drop every
		// ClusterRole, CRD and webhook with warnings only.
		{"a partial list is refused", "", []string{"--api-versions", "v1,apps/v1,cert-manager.io/v1"}, "--api-versions: the list looks partial: it lacks rbac.authorization.k8s.io/v1, apiextensions.k8s.io/v1, admissionregistration.k8s.io/v1, which every cluster serves; give the cluster's whole list, as `kubectl api-versions` prints it (comma-separated: kubectl api-versions | paste -sd, -)"},
		{"a partial env list is refused", "v1,apps/v1", nil, "KUBE_API_VERSIONS (the API versions the cluster serves): the list looks partial: it lacks rbac.authorization.k8s.io/v1,"},
		{"diff: a partial list is refused", "", []string{"--api-versions", "v1", "--namespace", "moved"}, "--api-versions: the list looks partial: it lacks apps/v1,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBE_API_VERSIONS", tc.env)
			cmd := "render"
			if strings.HasPrefix(tc.name, "diff") {
				cmd = "diff"
			}
			out, stderr, err := run(t, append([]string{cmd, "../../examples/demo"}, tc.args...)...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("want an error containing %q, got %v\n%s", tc.err, err, stderr)
				}
				return
			}
			if err != nil || out != want {
				t.Errorf("%v: output differs from the render without API versions: %v\n%s", err, out != want, stderr)
			}
		})
	}
	// inspect DIR reads the variable too (its requirements report).
	t.Setenv("KUBE_API_VERSIONS", vanilla)
	if out, _, err := run(t, "inspect", "../../examples/demo"); err != nil || !strings.Contains(out, noCertManager) {
		t.Errorf("inspect DIR with KUBE_API_VERSIONS: %v\n%s", err, out)
	}
}
