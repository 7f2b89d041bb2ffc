package tenancy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/safefile"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// rewrite replaces file's content with text of the same size and gives it
// back its modification time: the change a size+mtime stamp misses.
func rewrite(t *testing.T, file, text string, rename bool) {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(text)) != fi.Size() {
		t.Fatalf("%s: %d bytes, want %d", file, len(text), fi.Size())
	}
	target := file
	if rename {
		target = file + ".new"
	}
	if err := os.WriteFile(target, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(target, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if rename {
		if err := os.Rename(target, file); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReloadSeesEveryFile: the tenancy policy, reloaded as serve reloads
// it (safefile.Reloading over Policy.Files), loads again when the
// trustPolicy file an entry names changes, and when either is replaced by
// one of the same size and modification time, in place or by rename.
func TestReloadSeesEveryFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tenancy.yaml")
	trustFile := filepath.Join(dir, "team-a-trust.yaml")
	trustText := func(mode string) string {
		return "apiVersion: " + trust.APIVersion + "\nkind: " + trust.Kind + "\nscopes:\n- match: registry.example.com\n  mode: " + mode + "\n"
	}
	policy := func(name string) string {
		return "apiVersion: olm-cmp.dev/v1alpha1\nkind: TenancyPolicy\nunlistedProjects: deny\nprojects:\n- name: " + name + "\n  images: [registry.example.com/team-a]\n  trustPolicy: team-a-trust.yaml\n"
	}
	for f, text := range map[string]string{file: policy("team-a"), trustFile: trustText("warn")} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := safefile.NewReloading(file, tenancy.Load, (*tenancy.Policy).Files)
	if err != nil {
		t.Fatal(err)
	}
	mode := func() trust.Mode {
		t.Helper()
		p, err := src.Get()
		if err != nil {
			t.Fatal(err)
		}
		return p.Projects[0].Trust.Scopes[0].Mode
	}
	if m := mode(); m != trust.Warn {
		t.Fatalf("mode %s", m)
	}
	// "off " (YAML drops the space) is as long as "warn".
	rewrite(t, trustFile, strings.Replace(trustText("warn"), "warn", "off ", 1), false)
	if m := mode(); m != trust.Off {
		t.Errorf("trustPolicy rewritten in place (same size, same mtime): mode %s, want off", m)
	}
	rewrite(t, trustFile, trustText("warn"), true)
	if m := mode(); m != trust.Warn {
		t.Errorf("trustPolicy replaced by rename (same size, same mtime): mode %s, want warn", m)
	}
	rewrite(t, file, policy("team-b"), false)
	if p, _ := src.Get(); p.Projects[0].Name != "team-b" {
		t.Errorf("tenancy policy rewritten in place (same size, same mtime): entry %s, want team-b", p.Projects[0].Name)
	}
	// A trustPolicy that stops loading fails the policy until it is fixed.
	if err := os.Remove(trustFile); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Get(); err == nil || !strings.Contains(err.Error(), "team-a-trust.yaml") {
		t.Errorf("trustPolicy deleted: %v", err)
	}
	if err := os.WriteFile(trustFile, []byte(trustText("warn")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Get(); err != nil {
		t.Errorf("trustPolicy restored: %v", err)
	}
}
