package cmptest

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
)

// healthDir holds olm-cmp's Argo CD health checks: <group>_<Kind>.lua and their status samples in
// testdata/<group>_<Kind>/. resource-customizations.yaml beside it is generated from the scripts.
const healthDir = "../../deploy/argocd/health"

type healthCase struct {
	status  health.HealthStatusCode
	message string // a substring of the message
}

// healthCases is what each sample must evaluate to. Every sample file has an entry and every
// entry a file (TestHealthChecks fails on either side missing), so a new sample needs a verdict.
var healthCases = map[string]map[string]healthCase{
	"operator.openshift.io_CertManager": {
		"healthy.yaml":                   {health.HealthStatusHealthy, "controller, webhook and cainjector Deployments are available"},
		"progressing.yaml":               {health.HealthStatusProgressing, "cert-manager-controller-deploymentAvailable: Waiting for Deployment"},
		"no-status.yaml":                 {health.HealthStatusProgressing, "Waiting for cert-manager-operator to report status"},
		"starting.yaml":                  {health.HealthStatusProgressing, "Waiting for condition cert-manager-controller-deploymentAvailable"},
		"rolling-out.yaml":               {health.HealthStatusProgressing, "cert-manager-controller-deploymentProgressing: Waiting for Deployment to update pods"},
		"webhook-unavailable.yaml":       {health.HealthStatusProgressing, "cert-manager-webhook-deploymentAvailable: Waiting for Deployment"},
		"degraded-invalid-override.yaml": {health.HealthStatusDegraded, `cert-manager-controller-deploymentDegraded: error running hook function (index=5): validation failed due to unsupported arg "--invalid-args"="foo"`},
		"degraded-static-resources.yaml": {health.HealthStatusDegraded, "cert-manager-webhook-static-resources-Degraded: \"cert-manager-deployment/webhook/cert-manager-webhook-subjectaccessreviews-crb.yaml\""},
		"stale-generation.yaml":          {health.HealthStatusProgressing, "observe generation 3 (status is for generation 2)"},
	},
	"operator.openshift.io_LeaderWorkerSetOperator": {
		"healthy.yaml":                       {health.HealthStatusHealthy, "LeaderWorkerSet controller Deployment is available"},
		"progressing.yaml":                   {health.HealthStatusProgressing, "Available: Operand Deployment is not available"},
		"no-status.yaml":                     {health.HealthStatusProgressing, "Waiting for lws-operator to report status"},
		"degraded-missing-cert-manager.yaml": {health.HealthStatusDegraded, "Degraded: please make sure that cert-manager is installed on your cluster"},
		"waiting-for-certificate.yaml":       {health.HealthStatusDegraded, `TargetConfigControllerDegraded: secret "webhook-server-cert" not found`},
		"stale-generation.yaml":              {health.HealthStatusProgressing, "observe generation 4 (status is for generation 3)"},
	},
	"sailoperator.io_Istio": {
		"healthy.yaml":                     {health.HealthStatusHealthy, "Istio control plane is ready (active revision default)"},
		"progressing.yaml":                 {health.HealthStatusProgressing, "Ready is False (IstiodNotReady): not all istiod pods are ready"},
		"no-status.yaml":                   {health.HealthStatusProgressing, "Waiting for sail-operator to reconcile the Istio"},
		"revision-without-status.yaml":     {health.HealthStatusProgressing, "Reconciled is Unknown"},
		"revision-not-found.yaml":          {health.HealthStatusProgressing, "Reconciled is False (ActiveRevisionNotFound): active IstioRevision not found"},
		"degraded-namespace-missing.yaml":  {health.HealthStatusDegraded, `Reconciled is False (ReconcileError): error reconciling resource: namespace "istio-system" doesn't exist`},
		"degraded-eol-version.yaml":        {health.HealthStatusDegraded, `version "v1.27.9" is end-of-life`},
		"cni-not-healthy.yaml":             {health.HealthStatusProgressing, "DependenciesHealthy is False (IstioCNINotHealthy)"},
		"cni-not-found.yaml":               {health.HealthStatusProgressing, "DependenciesHealthy is False (IstioCNINotFound): IstioCNI resource does not exist"},
		"stale-generation.yaml":            {health.HealthStatusProgressing, "observe generation 2 (status is for generation 1)"},
		"before-dependencies-healthy.yaml": {health.HealthStatusHealthy, "Istio control plane is ready"},
	},
	"sailoperator.io_IstioRevision": {
		"healthy.yaml":                {health.HealthStatusHealthy, "istiod is ready"},
		"progressing.yaml":            {health.HealthStatusProgressing, "Ready is False (IstiodNotReady): not all istiod pods are ready"},
		"no-status.yaml":              {health.HealthStatusProgressing, "Waiting for sail-operator to reconcile the IstioRevision"},
		"scaled-to-zero.yaml":         {health.HealthStatusProgressing, "istiod Deployment is scaled to zero replicas"},
		"readiness-check-failed.yaml": {health.HealthStatusProgressing, "Ready is Unknown (ReadinessCheckFailed)"},
		"degraded-name-taken.yaml":    {health.HealthStatusDegraded, "Reconciled is False (NameAlreadyExists): an IstioRevisionTag exists with this name"},
		"ztunnel-not-found.yaml":      {health.HealthStatusProgressing, "DependenciesHealthy is False (ZTunnelNotFound)"},
		"stale-generation.yaml":       {health.HealthStatusProgressing, "observe generation 3 (status is for generation 2)"},
	},
	"sailoperator.io_IstioCNI": {
		"healthy.yaml":                    {health.HealthStatusHealthy, "All istio-cni-node pods are ready"},
		"progressing.yaml":                {health.HealthStatusProgressing, "Ready is False (DaemonSetNotReady): not all istio-cni-node pods are ready"},
		"no-status.yaml":                  {health.HealthStatusProgressing, "Waiting for sail-operator to reconcile the IstioCNI"},
		"no-pods-scheduled.yaml":          {health.HealthStatusProgressing, "no istio-cni-node pods are currently scheduled"},
		"degraded-namespace-missing.yaml": {health.HealthStatusDegraded, `Reconciled is False (ReconcileError): error reconciling resource: namespace "istio-cni" doesn't exist`},
		"stale-generation.yaml":           {health.HealthStatusProgressing, "observe generation 2 (status is for generation 1)"},
	},
	"sailoperator.io_ZTunnel": {
		"healthy.yaml":                    {health.HealthStatusHealthy, "All ztunnel pods are ready"},
		"progressing.yaml":                {health.HealthStatusProgressing, "Ready is False (DaemonSetNotReady): not all ztunnel pods are ready"},
		"no-status.yaml":                  {health.HealthStatusProgressing, "Waiting for sail-operator to reconcile the ZTunnel"},
		"no-pods-scheduled.yaml":          {health.HealthStatusProgressing, "no ztunnel pods are currently scheduled"},
		"degraded-namespace-missing.yaml": {health.HealthStatusDegraded, `Reconciled is False (ReconcileError): error reconciling resource: namespace "ztunnel" doesn't exist`},
		"stale-generation.yaml":           {health.HealthStatusProgressing, "observe generation 2 (status is for generation 1)"},
	},
	"sailoperator.io_IstioRevisionTag": {
		"healthy.yaml":                  {health.HealthStatusHealthy, "Tag points to IstioRevision prod"},
		"healthy-unused.yaml":           {health.HealthStatusHealthy, "Tag points to IstioRevision prod"},
		"progressing.yaml":              {health.HealthStatusProgressing, "Reconciled is False (RefNotFound): referenced Istio resource does not exist"},
		"no-status.yaml":                {health.HealthStatusProgressing, "Waiting for sail-operator to reconcile the IstioRevisionTag"},
		"istio-without-revision.yaml":   {health.HealthStatusProgressing, "transient error: referenced Istio has no active revision"},
		"degraded-name-taken.yaml":      {health.HealthStatusDegraded, "Reconciled is False (NameAlreadyExists): an IstioRevision exists with this name"},
		"degraded-remote-revision.yaml": {health.HealthStatusDegraded, "IstioRevisionTag cannot reference a remote IstioRevision"},
		"stale-generation.yaml":         {health.HealthStatusProgressing, "observe generation 2 (status is for generation 1)"},
	},
}

// includeLine marks where a script takes a shared part (_<family>.lua) in the generated argocd-cm.
var includeLine = regexp.MustCompile(`(?m)^-- #include _[a-z]+\.lua\n`)

// containsParts reports whether script holds every part of src between its include lines.
func containsParts(script, src string) bool {
	for _, part := range includeLine.Split(src, -1) {
		if !strings.Contains(script, part) {
			return false
		}
	}
	return true
}

// TestHealthChecks evaluates every status sample with Argo CD 3.6.1's health assessment: the
// argocd-cm overrides (as Argo CD parses them) through gitops-engine's GetResourceHealth, the
// call the application controller makes. Like every argocd-cm script, ours run without Lua's
// standard libraries (useOpenLibs is not set), unlike Argo CD's built-in scripts and their tests.
// The scripts and samples live outside this module, where Go's test cache does not look for
// changes: run with -count=1 (test/argocd/run.sh does).
func TestHealthChecks(t *testing.T) {
	// deploy/argocd/resource-customizations.yaml is the argocd-cm patch users install.
	overrides := overridesFrom(t, filepath.Join(healthDir, "..", "resource-customizations.yaml"))

	scripts, err := filepath.Glob(filepath.Join(healthDir, "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatalf("no scripts in %s", healthDir)
	}
	for _, f := range scripts {
		name := strings.TrimSuffix(filepath.Base(f), ".lua")
		if strings.HasPrefix(name, "_") { // a part the scripts include (go test ./deploy checks how)
			continue
		}
		group, kind, _ := strings.Cut(name, "_")
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The YAML is what users install: it must carry this very script under the key Argo CD
		// maps to group/kind, with the standard libraries off.
		o, ok := overrides[group+"/"+kind]
		switch {
		case !ok:
			t.Errorf("%s: argocd-cm has no override for %s/%s", f, group, kind)
		case !containsParts(o.HealthLua, string(src)):
			t.Errorf("%s: argocd-cm's health script for %s/%s differs from the file", f, group, kind)
		case o.UseOpenLibs:
			t.Errorf("%s/%s: useOpenLibs is set; the scripts must not need it", group, kind)
		}
		if _, ok := healthCases[name]; !ok {
			t.Errorf("%s: no expected results in healthCases", f)
		}
	}

	dirs := make([]string, 0, len(healthCases))
	for dir := range healthCases {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		cases := healthCases[dir]
		files, err := filepath.Glob(filepath.Join(healthDir, "testdata", dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("testdata/%s: no samples", dir)
		}
		onDisk := map[string]bool{}
		for _, f := range files {
			onDisk[filepath.Base(f)] = true
			if _, ok := cases[filepath.Base(f)]; !ok {
				t.Errorf("%s: no expected result in healthCases", f)
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
				if !onDisk[n] {
					t.Fatalf("testdata/%s/%s: no such sample", dir, n)
				}
				evalSample(t, filepath.Join(healthDir, "testdata", dir, n), overrides, want)
			})
		}
	}
}
