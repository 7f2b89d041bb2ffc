package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
)

// demoBump copies the demo bundle into a new directory with every old replaced by
// new in file (under manifests/).
func demoBump(t *testing.T, file, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	badinput.CopyDir(t, "../../examples/demo/bundle", dir)
	p := filepath.Join(dir, "manifests", file)
	data, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("%s lacks %q (%v)", p, old, err)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDiffRequirements: a requirement finding the bump adds (or, the other
// way round, removes) is in every output form, not only on stderr.
func TestDiffRequirements(t *testing.T) {
	latest := demoBump(t, "greeter-operator.clusterserviceversion.yaml", "greeter-operator:v0.2.0", "greeter-operator:latest")
	const key = "image:mirror.example.com/olm-cmp/greeter-operator:latest"
	const details = "(from CSV relatedImages greeter; Deployment/greeter-operator-controller container manager): tag latest or no tag, and no digest: what runs changes without a change in Git; fix: rewrite it with spec.images (a prefix or the whole reference → a pullable reference, pinned by digest)"
	for _, tc := range []struct {
		output string
		want   []string
	}{
		{"text", []string{
			"# 0 safety errors, 0 warnings, 0 added, 0 removed, 1 changed, 1 requirement added, 0 removed\n",
			"\nRequirements (1 added, 0 removed):\n+ WARNING  " + key + "  " + details + "\n",
		}},
		{"markdown", []string{
			"**0 safety errors, 0 warnings, 0 added, 0 removed, 1 changed, 1 requirement added, 0 removed**",
			"#### Requirements\n\n| Change | Severity | Requirement | Details |\n|---|---|---|---|\n| added | warning | `" + key + "` | " + strings.ReplaceAll(details, "_", "\\_") + " |\n",
		}},
	} {
		out, stderr, code := runStatus(t, "diff", "../../examples/demo", "--to-bundle", latest, "-o", tc.output)
		if code != diffChanges {
			t.Fatalf("%s: status %d, stderr:\n%s", tc.output, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("-o %s lacks\n%q\nin:\n%.1500s", tc.output, w, out)
			}
		}
	}
	r := diffJSON(t, diffChanges, "../../examples/demo", "--to-bundle", latest)
	if len(r.Requirements.Added) != 1 || r.Requirements.Added[0].Key() != key || r.Requirements.Added[0].Accepted || len(r.Requirements.Removed) != 0 {
		t.Errorf("json requirements: %+v", r.Requirements)
	}

	// The other way round (a bundle directory as FROM): the finding is
	// removed.
	from := t.TempDir()
	badinput.CopyDir(t, "../../examples/demo", from)
	badinput.CopyDir(t, latest, filepath.Join(from, "bundle"))
	out, _, code := runStatus(t, "diff", from, "../../examples/demo")
	if want := "\nRequirements (0 added, 1 removed):\n- WARNING  " + key + "  no longer required\n"; code != diffChanges || !strings.Contains(out, want) {
		t.Errorf("status %d, want %d and %q in:\n%.1500s", code, diffChanges, want, out)
	}
	r = diffJSON(t, diffChanges, from, "../../examples/demo")
	if len(r.Requirements.Removed) != 1 || r.Requirements.Removed[0].Key() != key || len(r.Requirements.Added) != 0 {
		t.Errorf("json requirements: %+v", r.Requirements)
	}
}

// TestDiffAcknowledge: a safety error that TO's spec.acknowledge names no
// longer makes the exit status 2 and shows with its reason; an entry that
// names no finding is a warning, an error under strict.
func TestDiffAcknowledge(t *testing.T) {
	to := demoBump(t, "greeter.example.com_greeters.yaml", "default: 1", "default: 2")
	app := func(acknowledge string) string {
		dir := t.TempDir()
		badinput.CopyDir(t, "../../examples/demo", dir)
		f, err := os.OpenFile(filepath.Join(dir, "olm-cmp.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(acknowledge); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const finding = "greeters.greeter.example.com v1alpha1 .spec.replicas: default value changed: 1 -> 2"
	const ack = "  acknowledge:\n  - {rule: default, crd: greeters.greeter.example.com, version: v1alpha1, path: .spec.replicas, reason: every Greeter sets replicas}\n"
	const stale = "  - {rule: default, crd: greeters.greeter.example.com, version: v1alpha1, path: .spec.message, reason: old}\n"
	const staleWarning = `warning: spec.acknowledge[1] "default greeters.greeter.example.com v1alpha1 .spec.message" matched no safety finding of this upgrade: remove it (it was for another bump, or the finding's rule, crd, version or path differ)` + "\n"

	out, _, code := runStatus(t, "diff", app(""), "--to-bundle", to)
	if want := "  ERROR  default  " + finding + "\n"; code != diffUnsafe || !strings.Contains(out, want) {
		t.Errorf("not acknowledged: status %d (want %d), want %q in:\n%.1000s", code, diffUnsafe, want, out)
	}

	dir := app(ack + stale)
	out, stderr, code := runStatus(t, "diff", dir, "--to-bundle", to)
	for _, want := range []string{
		"# 0 safety errors, 0 warnings, 1 acknowledged, 0 added, 0 removed, 1 changed\n",
		"  ERROR  default  " + finding + " (acknowledged: every Greeter sets replicas)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%.1000s", want, out)
		}
	}
	if code != diffChanges || !strings.Contains(stderr, staleWarning) {
		t.Errorf("status %d (want %d), stderr:\n%s", code, diffChanges, stderr)
	}
	out, _, _ = runStatus(t, "diff", dir, "--to-bundle", to, "-o", "markdown")
	if want := "| error | default | greeters.greeter.example.com | v1alpha1 | `.spec.replicas` | default value changed: 1 -&gt; 2 (acknowledged: every Greeter sets replicas) |\n"; !strings.Contains(out, want) || strings.Contains(out, ":x:") {
		t.Errorf("markdown lacks %q (or still says :x:):\n%.1500s", want, out)
	}
	r := diffJSON(t, diffChanges, dir, "--to-bundle", to)
	if len(r.Safety) != 1 || r.Safety[0].Acknowledged != "every Greeter sets replicas" {
		t.Errorf("json safety: %+v", r.Safety)
	}

	// --fail-on warning: an acknowledged error still passes.
	if _, _, code := runStatus(t, "diff", dir, "--to-bundle", to, "--fail-on", "warning"); code != diffChanges {
		t.Errorf("--fail-on warning: status %d, want %d", code, diffChanges)
	}
}

// TestDiffAcknowledgeLoki is the trial's case: loki-operator 0.11.0 drops a
// stored status field of LokiStack v1; the reviewer judged it and says so.
func TestDiffAcknowledgeLoki(t *testing.T) {
	from := specDir(t, sharedBundle(t, "loki-operator-0.10.2"), "loki-operator")
	to := specDir(t, sharedBundle(t, "loki-operator-0.11.0"), "loki-operator")
	f, err := os.OpenFile(filepath.Join(to, "olm-cmp.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("  acknowledge:\n  - rule: existingFieldRemoval\n    crd: lokistacks.loki.grafana.com\n    version: v1\n    path: .status.networkPolicyRuleSet\n    reason: status only, the operator writes it again\n")
	f.Close()
	out, stderr, code := runStatus(t, "diff", from, to)
	want := "  ERROR  existingFieldRemoval  lokistacks.loki.grafana.com v1 .status.networkPolicyRuleSet: field removed: objects that set it lose it (acknowledged: status only, the operator writes it again)\n"
	if code != diffChanges || !strings.Contains(out, want) || strings.Contains(stderr, "acknowledge[") {
		t.Errorf("status %d (want %d), want %q in:\n%.1500s\nstderr:\n%s", code, diffChanges, want, out, stderr)
	}
}
