package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/hack/sidecar"
)

// TestArgoCDTenancy is the argocd suite's tenancy case (Argo CD 3.6.1, docs/tenancy.md):
// olm-cmp's sidecar, as deploy/kustomize/examples/argocd-tenancy installs it, has a tenancy
// policy (the olm-cmp-tenancy ConfigMap) and two AppProjects, team-a and team-b, each with its
// own registry credentials (keys of the olm-cmp-tenant-registry Secret). Registry A accepts only team A's login, registry B only team
// B's. team-a may render from registry A and from registry B's shared/ repository; team-b from
// registry B.
//   - each team's own Application is Synced and Healthy;
//   - team-a's Application naming team B's repository (team-b/) gets a ComparisonError with the
//     policy's one-line refusal, and nothing of it is applied;
//   - team-a's Application naming, by digest, the private image of shared/ that team-b's render
//     has put in the sidecar's caches stays refused: team A's credentials cannot read it.
func TestArgoCDTenancy(t *testing.T) {
	e := setup(t)
	bin := argoV3Bin()
	regA, openA := authRegistry(t, "team-a", "pass-a")
	regB, openB := authRegistry(t, "team-b", "pass-b")
	tiny := filepath.Join(e.repo, "internal", "cmpserver", "testdata", "repo", "bundles", "tiny")
	// Team B's operator is another one (its own package, CRD group and names): two Applications
	// of one operator would fight over its cluster-scoped objects.
	tinyB := filepath.Join(e.work, "tinyb")
	renamed(t, tiny, tinyB, "tiny", "tinyb")
	openA.Store(true)
	openB.Store(true)
	pushBundle(t, tiny, regA+"/team-a/tiny:v1", nil)
	pushBundle(t, tinyB, regB+"/team-b/tiny:v1", nil)
	pushBundle(t, tinyB, regB+"/shared/tiny:v1", nil)
	sharedDigest, err := crane.Digest(regB + "/shared/tiny:v1")
	must(t, err)
	openA.Store(false)
	openB.Store(false)

	// The sidecar as deploy/kustomize/examples/argocd-tenancy installs it: the policy is the
	// ConfigMap olm-cmp-tenancy, each team's docker config a key of the Secret
	// olm-cmp-tenant-registry, mounted at the policy's credentialsDir.
	creds := map[string]string{}
	for file, login := range map[string][2]string{"team-a.json": {regA, "team-a:pass-a"}, "team-b.json": {regB, "team-b:pass-b"}} {
		creds[file] = fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, login[0], base64.StdEncoding.EncodeToString([]byte(login[1])))
	}
	policy := fmt.Sprintf(`apiVersion: olm-cmp.dev/v1alpha1
kind: TenancyPolicy
unlistedProjects: deny
credentialsDir: /etc/olm-cmp/tenant-registry
projects:
- name: team-a
  images: [%[1]s/team-a, %[2]s/shared]
  registryConfig: team-a.json
- name: team-b
  images: [%[2]s/team-b, %[2]s/shared]
  registryConfig: team-b.json
`, regA, regB)

	a := startArgoCD(t, e, bin, argoOptions{v3: true, example: "argocd-tenancy",
		configMaps: map[string]map[string]string{"olm-cmp-tenancy": {"tenancy.yaml": policy}},
		secrets:    map[string]map[string]string{"olm-cmp-tenant-registry": creds},
		sidecar: func(s *sidecar.Spec) {
			// both team registries speak plain HTTP too
			s.SetEnv("OLM_CMP_INSECURE_REGISTRIES", envOf(s, "OLM_CMP_INSECURE_REGISTRIES")+","+regA+","+regB)
		}})
	apps := []string{"ten-a-own", "ten-b-own", "ten-a-b-registry", "ten-a-b-cached"}
	t.Cleanup(func() {
		_, _ = kubectl(t, append(append([]string{"-n", "argocd", "delete", "application"}, apps...), "--ignore-not-found", "--wait=false")...)
	})
	for _, p := range []string{"team-a", "team-b"} {
		f := filepath.Join(e.work, "appproject-"+p+".yaml")
		must(t, os.WriteFile(f, []byte("apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: "+p+"\n  namespace: argocd\n"+
			"spec:\n  sourceRepos: ['*']\n  destinations: [{server: '*', namespace: '*'}]\n  clusterResourceWhitelist: [{group: '*', kind: '*'}]\n"), 0o644))
		mustKubectl(t, "apply", "--server-side", "-f", f)
	}
	refs := map[string]string{
		"ten-a-own":        regA + "/team-a/tiny:v1",
		"ten-b-own":        regB + "/shared/tiny:v1",
		"ten-a-b-registry": regB + "/team-b/tiny:v1",
		"ten-a-b-cached":   regB + "/shared/tiny@" + sharedDigest,
	}
	for name, ref := range refs {
		dir := filepath.Join(a.git, "tenancy", name)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), fmt.Appendf(nil,
			"apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: %s\n  namespace: %s\n", ref, name), 0o644))
	}
	rev := a.commit("two teams' bundles")
	start := time.Now()
	a.projectApplication("ten-a-own", "team-a")
	a.projectApplication("ten-b-own", "team-b")
	a.projectApplication("ten-a-b-registry", "team-a")

	waitApp(t, "ten-a-own", rev, 6*time.Minute)
	waitApp(t, "ten-b-own", rev, 6*time.Minute)
	t.Logf("ten-a-own, ten-b-own: Synced + Healthy in %v", time.Since(start).Round(time.Second))

	msg := waitComparisonError(t, "ten-a-b-registry", []string{
		`project "team-a" may not render spec.bundle "` + refs["ten-a-b-registry"] + `"`,
		"tenancy policy tenancy.yaml line 6 (project \"team-a\") allows bundle images from " + regA + "/team-a, " + regB + "/shared only",
		"fix:",
	})
	t.Logf("ten-a-b-registry: ComparisonError: %s", msg)

	// team-b's render put shared/tiny in the caches (rendered output, extracted bundle): team A
	// names it by digest, which no tag resolution would check.
	a.projectApplication("ten-a-b-cached", "team-a")
	msg = waitComparisonError(t, "ten-a-b-cached", []string{
		`project "team-a" cannot read image ` + refs["ten-a-b-cached"] + ` with its registryConfig "team-a.json"`,
		"the registry " + regB + " answered 401",
		"fix: add credentials for " + regB,
	})
	t.Logf("ten-a-b-cached: ComparisonError: %s", msg)
	// Still refused on a hard refresh (a refusal is never cached as a success).
	refresh(t, "ten-a-b-cached", "hard")
	time.Sleep(5 * time.Second)
	waitComparisonError(t, "ten-a-b-cached", []string{"cannot read image " + refs["ten-a-b-cached"]})

	for _, name := range []string{"ten-a-b-registry", "ten-a-b-cached"} {
		st := appStatus(t, name)
		if st.Status.OperationState.Phase != "" || len(st.Status.History) != 0 {
			t.Errorf("%s was synced: operation %q, %d history entries", name, st.Status.OperationState.Phase, len(st.Status.History))
		}
		if out, err := kubectl(t, "get", "namespace", name); err == nil {
			t.Errorf("namespace %s exists: %s", name, out)
		}
	}
}

// argoV3Bin is where the Argo CD 3.6.1 binaries are: $ARGOCD_BIN (run.sh sets it), else
// build-argocd.sh's default.
func argoV3Bin() string {
	if bin := os.Getenv("ARGOCD_BIN"); bin != "" {
		return bin
	}
	return filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "argocd-v3", "bin")
}

// projectApplication applies an Application of project for the directory tenancy/<name> of
// the file:// repository, deploying to the namespace <name>.
func (a *argoCD) projectApplication(name, project string) {
	t := a.t
	app := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd"},
		"spec": map[string]any{"project": project,
			"source": map[string]any{"repoURL": "file://" + a.git, "path": "tenancy/" + name, "targetRevision": "main",
				"plugin": map[string]any{"name": a.plugin}},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": name},
			"syncPolicy":  map[string]any{"automated": map[string]any{"prune": true, "selfHeal": true}}}}
	b, err := yaml.Marshal(app)
	must(t, err)
	f := filepath.Join(a.e.work, "application-"+name+".yaml")
	must(t, os.WriteFile(f, b, 0o644))
	mustKubectl(t, "apply", "-f", f)
}

// waitComparisonError waits for the Application's ComparisonError to contain every want, and
// returns it.
func waitComparisonError(t *testing.T, name string, want []string) string {
	t.Helper()
	var msg string
	waitFor(t, 3*time.Minute, "a ComparisonError on "+name+" containing "+strings.Join(want, " … "), func() bool {
		out, err := kubectl(t, "-n", "argocd", "get", "application", name, "-o", "json")
		if err != nil {
			return false
		}
		var st appState
		if json.Unmarshal(out, &st) != nil {
			return false
		}
		for _, c := range st.Status.Conditions {
			if c.Type == "ComparisonError" {
				msg = c.Message
			}
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				return false
			}
		}
		return true
	})
	return msg
}

// renamed copies the bundle directory from to to with every old in its files' text replaced.
func renamed(t *testing.T, from, to, old, new string) {
	t.Helper()
	must(t, filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), []byte(strings.ReplaceAll(string(b), old, new)), 0o644)
	}))
}
