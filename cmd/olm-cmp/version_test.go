package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: the build info's commit, time, modified flag and key module
// versions are printed (olm-cmp-check's for a module olm-cmp does not
// link, olm-cmp's own for one both link); what neither build info has says
// unknown; -X stamps win over the build info.
func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.3",
		Deps: []*debug.Module{
			{Path: "github.com/operator-framework/api", Version: "v0.45.0"},
			{Path: "k8s.io/apimachinery", Version: "v0.36.2"},
			// a fork under another path: the key module's line gives the fork's version
			{Path: "sigs.k8s.io/kustomize/api", Version: "v0.20.1", Replace: &debug.Module{Path: "example.com/fork/kustomize-api", Version: "v0.20.1-fork.1"}},
			{Path: "github.com/google/go-containerregistry", Version: "v0.21.0", Replace: &debug.Module{Path: "github.com/google/go-containerregistry", Version: "v0.21.7"}},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-11-28T15:00:00Z"}, {Key: "vcs.modified", Value: "true"}},
	}
	helper := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "github.com/sigstore/sigstore-go", Version: "v1.1.4"},
		{Path: "k8s.io/apimachinery", Version: "v0.99.0"},
	}}
	var b bytes.Buffer
	if err := writeVersion(&b, bi, helper); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"olm-cmp " + version + "\n",
		"  commit  0123456789abcdef (modified)\n",
		"  date    2026-11-28T15:00:00Z\n",
		"  go      go1.26.3 " + runtime.GOOS + "/" + runtime.GOARCH + "\n",
		"  github.com/operator-framework/api        v0.45.0\n",
		"  github.com/google/go-containerregistry   v0.21.7\n",
		"  k8s.io/apiextensions-apiserver           unknown\n",
		"  sigs.k8s.io/kustomize/api                v0.20.1-fork.1\n",
		"  k8s.io/apimachinery                      v0.36.2\n",
		"  github.com/sigstore/sigstore-go          v1.1.4\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}

	commit, date = "fedcba", "2026-01-02T03:04:05Z"
	defer func() { commit, date = "", "" }()
	b.Reset()
	writeVersion(&b, &debug.BuildInfo{}, nil)
	if !strings.Contains(b.String(), "  commit  fedcba\n  date    2026-01-02T03:04:05Z\n") || strings.Count(b.String(), "unknown") != len(keyModules) {
		t.Errorf("stamped, no build info:\n%s", b.String())
	}

	// This test binary's own build info: the real Go version and modules.
	b.Reset()
	cmd := newVersionCmd()
	cmd.SetOut(&b)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), runtime.Version()) || strings.Contains(b.String(), "github.com/operator-framework/api        unknown") {
		t.Errorf("olm-cmp version:\n%s", b.String())
	}
}
