package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// TestRegistryFlagsEnv: OLM_CMP_* variables stand in for the registry flags
// the command line does not give; a flag wins over its variable.
func TestRegistryFlagsEnv(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(creds, []byte("{}"), 0o600)
	os.WriteFile(creds+".flag", []byte("{}"), 0o600)
	parse := func(t *testing.T, args ...string) *bundle.ImageLoader {
		t.Helper()
		var f registryFlags
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		l, err := f.loader()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	l := parse(t)
	if l.CacheDir != defaultCacheDir() || l.RegistryConfig != "" || l.Insecure != nil {
		t.Errorf("no env, no flags: %+v", l)
	}

	t.Setenv(EnvInsecureRegistries, " reg.local:5000, ,other.local ")
	t.Setenv(EnvRegistryConfig, creds)
	t.Setenv(EnvCacheDir, "/env/cache")
	l = parse(t)
	if !slices.Equal(l.Insecure, []string{"reg.local:5000", "other.local"}) || l.RegistryConfig != creds || l.CacheDir != "/env/cache" {
		t.Errorf("env: %+v", l)
	}

	l = parse(t, "--insecure-registry", "flag.local", "--cache-dir", "/flag/cache", "--registry-config", creds+".flag")
	if !slices.Equal(l.Insecure, []string{"flag.local"}) || l.CacheDir != "/flag/cache" || l.RegistryConfig != creds+".flag" {
		t.Errorf("flags must win: %+v", l)
	}

	// A missing credentials file (an optional Secret not created) means no
	// credentials, said once; something there that is no file names where
	// it was set.
	t.Setenv(EnvRegistryConfig, "/no/such/config.json")
	var f registryFlags
	var notes []string
	f.note = func(msg string) { notes = append(notes, msg) }
	f.register(pflag.NewFlagSet("x", pflag.ContinueOnError))
	for range 2 {
		if l, err := f.loader(); err != nil || l.RegistryConfig != "/no/such/config.json" {
			t.Errorf("missing %s: %v", EnvRegistryConfig, err)
		}
	}
	want := EnvRegistryConfig + " /no/such/config.json does not exist: pulling without registry credentials until it does (it is read on every pull)"
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want once %q", notes, want)
	}
	t.Setenv(EnvRegistryConfig, t.TempDir())
	f = registryFlags{}
	f.register(pflag.NewFlagSet("x", pflag.ContinueOnError))
	if _, err := f.loader(); err == nil || !strings.HasPrefix(err.Error(), EnvRegistryConfig+" ") || !strings.Contains(err.Error(), "not a regular file: give a docker config.json") {
		t.Errorf("directory as %s: %v", EnvRegistryConfig, err)
	}
}

// TestGenerateInsecureRegistryFromEnv: in the classic mode `olm-cmp generate`
// reaches a plain-HTTP registry with only OLM_CMP_INSECURE_REGISTRIES set on
// its container, and caches bundles where OLM_CMP_CACHE_DIR says. Its
// DOCKER_CONFIG is the classic component's: the mount of the optional
// Secret olm-cmp-registry, an empty directory while the Secret does not
// exist, which means anonymous pulls.
func TestGenerateInsecureRegistryFromEnv(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "olm/tiny-bundle", "v1", "../../internal/cmpserver/testdata/repo/bundles/tiny")
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/olm/tiny-bundle:v1\n  namespace: tiny-system\n"), 0o644)
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv(EnvCacheDir, cache)
	generate := func() (string, error) {
		cmd := newGenerateCmd()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs([]string{app})
		err := cmd.Execute()
		return out.String(), err
	}
	if out, err := generate(); err == nil {
		t.Fatalf("a plain-HTTP registry worked without being opted in:\n%s", out)
	}
	t.Setenv(EnvInsecureRegistries, "other.example.com,"+host)
	out, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "kind: Deployment") {
		t.Errorf("output:\n%s", out)
	}
	if entries, _ := os.ReadDir(cache); len(entries) == 0 {
		t.Errorf("nothing cached in %s (%s)", cache, EnvCacheDir)
	}
}
