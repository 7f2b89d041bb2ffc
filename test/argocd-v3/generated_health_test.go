package cmptest

import (
	"context"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// generatedDir holds what `olm-cmp health-checks` generates for three shared bundles
// (dynatrace-operator, gitlab-operator-kubernetes, kubevirt-hyperconverged): argocd-cm.yaml,
// kept current by internal/healthcheck's TestSharedBundles, and status samples built from the
// CRDs' schemas (TestSamplesMatchSchemas validates them) in samples/<group>_<Kind>/.
const generatedDir = "../../internal/healthcheck/testdata"

// generatedCases is what each generated check must make of each sample: every sample has an
// entry and every entry a file.
var generatedCases = map[string]map[string]healthCase{
	"dynatrace.com_DynaKube": {
		"healthy.yaml":    {health.HealthStatusHealthy, "status.phase is Running"},
		"deploying.yaml":  {health.HealthStatusProgressing, "status.phase is Deploying"},
		"error.yaml":      {health.HealthStatusDegraded, "status.phase is Error"},
		"first-pass.yaml": {health.HealthStatusProgressing, "Waiting for the operator to set status.phase"},
		"no-status.yaml":  {health.HealthStatusProgressing, "Waiting for the operator to report the status of this DynaKube"},
	},
	"apps.gitlab.com_GitLab": {
		"healthy.yaml":         {health.HealthStatusHealthy, "Available is True (Available): GitLab is running and available to accept requests"},
		"preparing.yaml":       {health.HealthStatusProgressing, "Available is False (Available): GitLab is not available yet"},
		"upgrading.yaml":       {health.HealthStatusProgressing, "Upgrading is True (Upgrading): GitLab is upgrading to 9.4.0"},
		"stale-condition.yaml": {health.HealthStatusProgressing, "observe generation 3 (Available is for generation 2)"},
		"no-status.yaml":       {health.HealthStatusProgressing, "Waiting for the operator to report the status of this GitLab"},
	},
	"hco.kubevirt.io_HyperConverged": {
		"healthy.yaml":          {health.HealthStatusHealthy, "Available is True (ReconcileCompleted): Reconcile completed successfully"},
		"initializing.yaml":     {health.HealthStatusProgressing, "Progressing is True (Reconciling): Initializing HyperConverged cluster"},
		"upgrading.yaml":        {health.HealthStatusProgressing, "Progressing is True (HCOUpgrading): HCO is now upgrading to version 1.18.1"},
		"degraded.yaml":         {health.HealthStatusDegraded, "Degraded is True (KubeVirtDegraded): KubeVirt is degraded: virt-handler daemonset has no ready pods"},
		"stale-generation.yaml": {health.HealthStatusProgressing, "observe generation 3 (status is for generation 2)"},
		"no-status.yaml":        {health.HealthStatusProgressing, "Waiting for the operator to report the status of this HyperConverged"},
	},
}

// overridesFrom loads an argocd-cm patch into Argo CD's settings manager, which turns its
// health keys into resource overrides as the application controller does.
func overridesFrom(t *testing.T, file string) lua.ResourceHealthOverrides {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Namespace = "argocd"
	// the settings manager only sees ConfigMaps with this label (upstream's argocd-cm has it)
	cm.Labels = map[string]string{"app.kubernetes.io/part-of": "argocd"}
	mgr := settings.NewSettingsManager(context.Background(), fake.NewClientset(&cm), "argocd")
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		t.Fatal(err)
	}
	return lua.ResourceHealthOverrides(overrides)
}

// evalSample evaluates the status sample in file with overrides through gitops-engine's
// GetResourceHealth, the call the application controller makes, and checks it against want.
func evalSample(t *testing.T, file string, overrides lua.ResourceHealthOverrides, want healthCase) *health.HealthStatus {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &obj.Object); err != nil {
		t.Fatal(err)
	}
	got, err := health.GetResourceHealth(obj, overrides)
	if err != nil {
		t.Fatalf("health: %v", err)
	}
	if got == nil {
		t.Fatal("no health: no script was selected for this group and kind")
	}
	if got.Status != want.status || !strings.Contains(got.Message, want.message) {
		t.Errorf("got %s %q, want %s with %q", got.Status, got.Message, want.status, want.message)
	}
	return got
}

// ruleCases are the made-up kinds of internal/healthcheck's TestRuleFixture (testdata/rules):
// one per status-schema shape, on the rule's corners (failure types, unknown types only, phase
// casings, an enum, stale generations, malformed statuses that must not break the script).
var ruleCases = map[string]map[string]healthCase{
	"rules.olm-cmp.dev_Conditions": {
		"ready.yaml":            {health.HealthStatusHealthy, "Ready is True (Reconciled): all replicas ready"},
		"ready-unknown.yaml":    {health.HealthStatusProgressing, "Ready is Unknown (Reconciling): starting"},
		"failed.yaml":           {health.HealthStatusDegraded, "Failed is True (InvalidSpec): spec.size must be odd"},
		"stalled.yaml":          {health.HealthStatusDegraded, "Stalled is True (QuotaExceeded): pods forbidden"},
		"degraded-false.yaml":   {health.HealthStatusHealthy, "Available is True (AsExpected): 3 of 3 available"},
		"reconciling.yaml":      {health.HealthStatusProgressing, "Reconciling is True (Progressing): rolling out"},
		"other-types-only.yaml": {health.HealthStatusHealthy, "No readiness condition or phase to wait for (conditions: Valid, Synced)"},
		"empty-conditions.yaml": {health.HealthStatusProgressing, "Waiting for the operator to report the status of this Conditions"},
		"stale-condition.yaml":  {health.HealthStatusProgressing, "observe generation 3 (Ready is for generation 2)"},
		"stale-status.yaml":     {health.HealthStatusProgressing, "observe generation 3 (status is for generation 2)"},
		"hostile-shapes.yaml":   {health.HealthStatusProgressing, "Ready is true"},
		"no-status.yaml":        {health.HealthStatusProgressing, "Waiting for the operator to report the status of this Conditions"},
	},
	"rules.olm-cmp.dev_Phase": {
		"running.yaml":           {health.HealthStatusHealthy, "status.phase is Running"},
		"running-lowercase.yaml": {health.HealthStatusHealthy, "status.phase is running"},
		"failed-upper.yaml":      {health.HealthStatusDegraded, "status.phase is FAILED: backup target unreachable"},
		"creating.yaml":          {health.HealthStatusProgressing, "status.phase is Creating"},
		"empty-phase.yaml":       {health.HealthStatusProgressing, "Waiting for the operator to report the status of this Phase"},
		"no-status.yaml":         {health.HealthStatusProgressing, "Waiting for the operator to report the status of this Phase"},
	},
	"rules.olm-cmp.dev_State": {
		"ready.yaml":         {health.HealthStatusHealthy, "status.state is ready"},
		"errored.yaml":       {health.HealthStatusDegraded, "status.state is errored"},
		"pending.yaml":       {health.HealthStatusProgressing, "status.state is pending"},
		"not-in-enum.yaml":   {health.HealthStatusProgressing, "status.state is Running"},
		"hostile-value.yaml": {health.HealthStatusProgressing, `status.state is we"ird`},
	},
}

// TestGeneratedHealthChecks evaluates the generated checks on the status samples with Argo CD
// 3.6.1's health assessment (gitops-engine's GetResourceHealth over the argocd-cm overrides,
// standard libraries off, as for every argocd-cm script). Run with -count=1 (run.sh does): the
// files live outside this module.
func TestGeneratedHealthChecks(t *testing.T) {
	t.Run("corpus", func(t *testing.T) { evalGenerated(t, generatedDir, generatedCases) })
	t.Run("rules", func(t *testing.T) { evalGenerated(t, filepath.Join(generatedDir, "rules"), ruleCases) })
}

// evalGenerated evaluates dir/samples/<group>_<Kind>/*.yaml with dir/argocd-cm.yaml.
func evalGenerated(t *testing.T, generatedDir string, generatedCases map[string]map[string]healthCase) {
	overrides := overridesFrom(t, filepath.Join(generatedDir, "argocd-cm.yaml"))
	for key, o := range overrides {
		if o.HealthLua != "" && o.UseOpenLibs {
			t.Errorf("%s: useOpenLibs is set; generated scripts must not need it", key)
		}
	}
	dirs := make([]string, 0, len(generatedCases))
	for d := range generatedCases {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	onDiskDirs, _ := filepath.Glob(filepath.Join(generatedDir, "samples", "*"))
	if len(onDiskDirs) == 0 {
		t.Fatalf("%s/samples: no samples", generatedDir)
	}
	if len(onDiskDirs) != len(dirs) {
		t.Errorf("samples has %d kinds, generatedCases %d", len(onDiskDirs), len(dirs))
	}
	for _, dir := range dirs {
		cases := generatedCases[dir]
		group, kind, _ := strings.Cut(dir, "_")
		if _, ok := overrides[group+"/"+kind]; !ok {
			t.Errorf("argocd-cm.yaml has no check for %s/%s", group, kind)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(generatedDir, "samples", dir, "*.yaml"))
		for _, f := range files {
			if _, ok := cases[filepath.Base(f)]; !ok {
				t.Errorf("%s: no expected result in generatedCases", f)
			}
		}
		names := make([]string, 0, len(cases))
		for n := range cases {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			want := cases[n]
			t.Run(dir+"/"+n, func(t *testing.T) {
				got := evalSample(t, filepath.Join(generatedDir, "samples", dir, n), overrides, want)
				t.Logf("%s: %s %q", n, got.Status, got.Message)
			})
		}
	}
}

// TestArgoCDBuiltinList: internal/healthcheck/argocd-builtin.txt, the kinds health-checks leaves
// to Argo CD's built-in checks, is exactly the list of Argo CD 3.6.1's embedded health.lua files.
func TestArgoCDBuiltinList(t *testing.T) {
	var want []string
	err := fs.WalkDir(resource_customizations.Embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && pathpkg.Base(p) == "health.lua" {
			want = append(want, pathpkg.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	b, err := os.ReadFile("../../internal/healthcheck/argocd-builtin.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			got = append(got, l)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("argocd-builtin.txt (%d entries) differs from Argo CD's %d health.lua directories: regenerate it from resource_customizations", len(got), len(want))
	}
}
