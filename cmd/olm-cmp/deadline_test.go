package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/registry"
)

// stalledBundle is a registry whose manifests never answer, and the
// reference of a bundle on it.
func stalledBundle(t *testing.T) (host, ref string) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.PushDir(t, "olm/tiny-bundle", "v1", "../../internal/cmpserver/testdata/repo/bundles/tiny")
	fr.Inject(bundletest.Where{Path: bundletest.ManifestsPath}, bundletest.Fault{Stall: true}, 0)
	return fr.Host, fr.Host + "/olm/tiny-bundle:v1"
}

// TestTimeoutFlag: a one-shot command stops at --timeout, and its error
// names the step that was stalled and the limit that fired.
func TestTimeoutFlag(t *testing.T) {
	host, ref := stalledBundle(t)
	cases := []struct {
		name  string
		flags []string
		want  []string
	}{
		{"--timeout", []string{"--timeout", "500ms"},
			[]string{host, ref, "resolving tag v1", "did not finish within --timeout 500ms"}},
		{"--registry-timeout", []string{"--timeout", "0", "--registry-timeout", "300ms"},
			[]string{host, ref, "resolving tag v1", "did not answer within 300ms", "--registry-timeout"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			args := append([]string{"render", t.TempDir(), "--bundle", ref, "-n", "tiny", "--insecure-registry", host}, tc.flags...)
			out, _, err := run(t, args...)
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("took %s", elapsed)
			}
			if err == nil || out != "" {
				t.Fatalf("err %v, stdout %q", err, out)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
		})
	}
}

// TestAllowedRegistriesFlag: a bundle from a registry the list leaves out
// is refused before any request.
func TestAllowedRegistriesFlag(t *testing.T) {
	host, reqs := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "olm/tiny-bundle", "v1", "../../internal/cmpserver/testdata/repo/bundles/tiny")
	reqs.Reset()
	_, _, err := run(t, "render", t.TempDir(), "--bundle", host+"/olm/tiny-bundle:v1", "-n", "tiny",
		"--insecure-registry", host, "--allowed-registries", "quay.io,registry.redhat.io")
	if !errors.Is(err, registry.ErrNotAllowed) || !strings.Contains(err.Error(), "--allowed-registries") {
		t.Fatalf("got %v", err)
	}
	if n := reqs.Total(); n != 0 {
		t.Errorf("%d requests", n)
	}
	if _, _, err := run(t, "render", t.TempDir(), "--bundle", host+"/olm/tiny-bundle:v1", "-n", "tiny",
		"--insecure-registry", host, "--allowed-registries", "quay.io,"+host); err != nil {
		t.Errorf("an allowed registry: %v", err)
	}
}

// TestRegistryLimitsEnv: OLM_CMP_ALLOWED_REGISTRIES and
// OLM_CMP_REGISTRY_TIMEOUT stand in for their flags; a flag wins.
func TestRegistryLimitsEnv(t *testing.T) {
	parse := func(t *testing.T, args ...string) (*bundle.ImageLoader, error) {
		t.Helper()
		var f registryFlags
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		l, err := f.loader()
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	l, err := parse(t)
	if err != nil || l.AllowedRegistries != nil || l.Timeouts.ResponseHeader != registry.DefaultResponseHeaderTimeout {
		t.Errorf("defaults: %+v, %v", l, err)
	}
	t.Setenv(EnvAllowedRegistries, " quay.io, ,ghcr.io ")
	t.Setenv(EnvRegistryTimeout, "45s")
	l, err = parse(t)
	if err != nil || strings.Join(l.AllowedRegistries, "|") != "quay.io|ghcr.io" || l.Timeouts.ResponseHeader != 45*time.Second || l.Timeouts.ReadIdle != 45*time.Second {
		t.Errorf("env: %+v, %v", l, err)
	}
	l, err = parse(t, "--allowed-registries", "a.io,b.io", "--registry-timeout", "1m")
	if err != nil || strings.Join(l.AllowedRegistries, "|") != "a.io|b.io" || l.Timeouts.ResponseHeader != time.Minute {
		t.Errorf("flags must win: %+v, %v", l, err)
	}
	t.Setenv(EnvRegistryTimeout, "soon")
	if _, err := parse(t); err == nil || !strings.Contains(err.Error(), EnvRegistryTimeout) {
		t.Errorf("bad %s: %v", EnvRegistryTimeout, err)
	}
}

// bigCRDPair is two source directories, FROM and TO, each the demo bundle
// under a default spec, whose Greeter CRD has props string properties in
// FROM and the same as integers in TO (JSON: 100,000 properties are 2.7
// MB): a bump of a vendor-sized hostile CRD.
func bigCRDPair(t testing.TB, props int) (from, to string) {
	t.Helper()
	crd := greeterCRD(1, props, 0, false)
	for i, c := range []string{crd, strings.ReplaceAll(crd, `"type":"string"`, `"type":"integer"`)} {
		dir := filepath.Join(t.TempDir(), []string{"from", "to"}[i])
		badinput.CopyDir(t, "../../examples/demo/bundle", filepath.Join(dir, "bundle"))
		spec := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  bundle: ./bundle\n  namespace: greeter-system\n"
		if err := os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bundle", "manifests", "greeter.example.com_greeters.yaml"), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		from, to = to, dir
	}
	return from, to
}

// TestDiffTimeoutBigCRD: diff of two 2.7 MB CRDs of 100,000 properties
// (issue 26: --timeout 10s ran 18 s) stops at --timeout wherever it is:
// loading a bundle, rendering, the safety check or the comparison, each of
// which checks the deadline at a fine grain (internal/diff's countdown tests
// say where, exactly). Its error names the limit, nothing is written on
// stdout, and it returns well within the bound the other deadline tests use.
func TestDiffTimeoutBigCRD(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two CRDs of 2.7 MB")
	}
	from, to := bigCRDPair(t, 100000)
	for _, limit := range []string{"300ms", "1s"} {
		t.Run(limit, func(t *testing.T) {
			start := time.Now()
			out, stderr, code := runStatus(t, "diff", from, to, "--timeout", limit)
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("took %s", elapsed)
			}
			t.Log(strings.TrimSpace(stderr))
			if code != diffRenderError || out != "" {
				t.Fatalf("status %d, %d bytes on stdout; want %d and none", code, len(out), diffRenderError)
			}
			if want := "olm-cmp diff did not finish within --timeout " + limit + " (raise it with --timeout, or 0 for no limit)\n"; !strings.HasPrefix(stderr, "error: ") || !strings.HasSuffix(stderr, want) {
				t.Errorf("stderr %q, want an error ending %q", stderr, want)
			}
		})
	}
}
