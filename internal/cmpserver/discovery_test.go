package cmpserver

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/emptypb"
)

// TestMatchRepositoryWritesNothing: MatchRepository answers from the stream
// alone. With the work directory made unusable (a file in its place),
// GenerateManifest cannot extract anything, yet MatchRepository still
// answers, and right.
func TestMatchRepositoryWritesNothing(t *testing.T) {
	ts := startServer(t, &specEcho{})
	work := ts.srv.work.path
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(work, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	tgz := tgzOf(t, repoDir)
	for path, want := range map[string]bool{"apps/tiny": true, "apps": false, "bundles/tiny": false} {
		resp, err := ts.match(ctxT(t), t, call{tgz: tgz, appRelPath: path})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if resp.IsSupported != want {
			t.Errorf("%s: supported=%v, want %v", path, resp.IsSupported, want)
		}
	}
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny"}); err == nil {
		t.Error("GenerateManifest worked without a work directory: this test proves nothing")
	}
}

// TestMatchRepositoryEntries: the answer comes from entry names after path
// cleaning; symbolic links are followed through the tarball's own entries
// only, and count when they lead to a regular file inside the repository.
func TestMatchRepositoryEntries(t *testing.T) {
	ts := startServer(t, &specEcho{})
	dir := func(n string) tar.Header { return tar.Header{Name: n, Typeflag: tar.TypeDir, Mode: 0o755} }
	file := func(n string) tar.Header { return tar.Header{Name: n, Typeflag: tar.TypeReg} }
	link := func(n, to string) tar.Header { return tar.Header{Name: n, Typeflag: tar.TypeSymlink, Linkname: to} }
	for _, c := range []struct {
		name    string
		entries []tar.Header
		app     string
		want    bool
	}{
		{"regular file", []tar.Header{dir("app/"), file("app/olm-cmp.yaml")}, "app", true},
		{"uncleaned names", []tar.Header{file("./app//olm-cmp.yaml")}, "./app/", true},
		{"no directory entries", []tar.Header{file("a/b/olm-cmp.yaml")}, "a/b", true},
		{"repository root", []tar.Header{file("olm-cmp.yaml")}, ".", true},
		{"only in a subdirectory", []tar.Header{file("app/sub/olm-cmp.yaml")}, "app", false},
		{"only in the parent", []tar.Header{file("olm-cmp.yaml"), dir("app/")}, "app", false},
		{"other case", []tar.Header{file("app/OLM-CMP.yaml")}, "app", false},
		{"a directory of that name", []tar.Header{dir("app/olm-cmp.yaml/")}, "app", false},
		{"app path not in the tarball", []tar.Header{file("app/olm-cmp.yaml")}, "other", false},
		{"app path outside", []tar.Header{file("olm-cmp.yaml")}, "../..", false},
		{"link to a file beside it", []tar.Header{file("app/spec.yaml"), link("app/olm-cmp.yaml", "spec.yaml")}, "app", true},
		{"link before its target", []tar.Header{link("app/olm-cmp.yaml", "../shared/s.yaml"), file("shared/s.yaml")}, "app", true},
		{"link chain", []tar.Header{link("app/olm-cmp.yaml", "l2"), link("app/l2", "../x/real"), file("x/real")}, "app", true},
		{"link into a linked directory", []tar.Header{link("app/olm-cmp.yaml", "d/f"), link("app/d", "../real"), file("real/f")}, "app", true},
		{"linked app directory", []tar.Header{file("real/olm-cmp.yaml"), link("apps/app", "../real")}, "apps/app", true},
		{"dangling link", []tar.Header{link("app/olm-cmp.yaml", "missing.yaml")}, "app", false},
		{"link to a directory", []tar.Header{dir("app/d/"), link("app/olm-cmp.yaml", "d")}, "app", false},
		{"link loop", []tar.Header{link("app/olm-cmp.yaml", "a"), link("app/a", "olm-cmp.yaml")}, "app", false},
		{"dot-dot after a link is the target's parent", []tar.Header{link("app/l", "../x/y"), dir("x/y/"), file("x/olm-cmp.yaml"), link("app/olm-cmp.yaml", "l/../olm-cmp.yaml")}, "app", true},
		{"a regular file replaced by a link", []tar.Header{file("app/olm-cmp.yaml"), link("app/olm-cmp.yaml", "gone")}, "app", false},
		// Lexically ../l1/../olm-cmp.yaml is the root's olm-cmp.yaml; for real
		// l1/.. is the repository's parent.
		{"link chain leaving the repository", []tar.Header{link("l1", "."), link("app/olm-cmp.yaml", "../l1/../olm-cmp.yaml"), file("olm-cmp.yaml")}, "app", false},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			contents := map[string]string{}
			for _, e := range c.entries {
				contents[e.Name] = "x"
			}
			resp, err := ts.match(ctxT(t), t, call{tgz: tgzEntries(t, c.entries, contents), appRelPath: c.app})
			if err != nil {
				t.Fatal(err)
			}
			if resp.IsSupported != c.want {
				t.Errorf("supported=%v, want %v", resp.IsSupported, c.want)
			}
		})
	}
}

// TestMatchRepositoryRefusesWhatExtractionRefuses: the scan verifies the
// checksum and applies the same entry checks and limits as extraction.
func TestMatchRepositoryRefusesWhatExtractionRefuses(t *testing.T) {
	ts := startServer(t, &specEcho{}, func(o *ServerOptions) { o.Limits = Limits{MaxExtracted: 100, MaxEntries: 5} })
	good := tgzEntries(t, []tar.Header{{Name: "app/olm-cmp.yaml", Typeflag: tar.TypeReg}}, map[string]string{"app/olm-cmp.yaml": "x"})
	many := make([]tar.Header, 6)
	for i := range many {
		many[i] = tar.Header{Name: "f" + string(rune('a'+i)), Typeflag: tar.TypeDir, Mode: 0o755}
	}
	for _, c := range []struct {
		name string
		call call
		code codes.Code
		msg  string
	}{
		{"checksum mismatch", call{tgz: good, appRelPath: "app", checksum: strings.Repeat("0", 64)}, codes.DataLoss, "checksum mismatch"},
		{"truncated", call{tgz: good[:len(good)-10], appRelPath: "app", checksum: sum(good)}, codes.DataLoss, "checksum mismatch"},
		{"size cap", call{tgz: tgzEntries(t, []tar.Header{{Name: "big", Typeflag: tar.TypeReg}}, map[string]string{"big": strings.Repeat("x", 1000)}), appRelPath: "."}, codes.InvalidArgument, "more than 100 bytes"},
		{"entry cap", call{tgz: tgzEntries(t, many, nil), appRelPath: "."}, codes.InvalidArgument, "more than 5 entries"},
		{"path traversal", call{tgz: tgzEntries(t, []tar.Header{{Name: "../olm-cmp.yaml", Typeflag: tar.TypeReg}}, nil), appRelPath: "."}, codes.InvalidArgument, "path traversal"},
		{"escaping symlink", call{tgz: tgzEntries(t, []tar.Header{{Name: "app/olm-cmp.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"}}, nil), appRelPath: "app"}, codes.InvalidArgument, "leaves the repository"},
		{"absolute symlink", call{tgz: tgzEntries(t, []tar.Header{{Name: "app/olm-cmp.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, nil), appRelPath: "app"}, codes.InvalidArgument, "absolute path"},
		{"entry below a symlink", call{tgz: tgzEntries(t, []tar.Header{{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "."}, {Name: "l/olm-cmp.yaml", Typeflag: tar.TypeReg}}, nil), appRelPath: "l"}, codes.InvalidArgument, "below the symbolic link"},
		{"hard link", call{tgz: tgzEntries(t, []tar.Header{{Name: "app/olm-cmp.yaml", Typeflag: tar.TypeLink, Linkname: "x"}}, nil), appRelPath: "app"}, codes.InvalidArgument, "hard links"},
		{"not gzip", call{tgz: []byte("plain text"), appRelPath: "."}, codes.InvalidArgument, "not gzip"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			_, err := ts.match(ctxT(t), t, c.call)
			wantStatus(t, err, c.code, c.msg)
		})
	}
	if resp, err := ts.match(ctxT(t), t, call{tgz: good, appRelPath: "app"}); err != nil || !resp.IsSupported {
		t.Errorf("within the limits: %+v %v", resp, err)
	}
}

// TestDiscoveryFollowsPluginYAML: Argo CD calls MatchRepository (a second
// tarball) even for Applications that name the plugin, when
// CheckPluginConfiguration says discovery is configured. That follows
// plugin.yaml's spec.discover, as with Argo CD's own cmp-server.
func TestDiscoveryFollowsPluginYAML(t *testing.T) {
	write := func(t *testing.T, spec string) *PluginConfig {
		p := filepath.Join(t.TempDir(), "plugin.yaml")
		os.WriteFile(p, []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: olm-cmp}\nspec:\n  version: v1\n  generate: {command: [olm-cmp, generate]}\n"+spec), 0o644)
		c, err := LoadPluginConfig(p, true)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	repoYAML, err := LoadPluginConfig("../../plugin.yaml", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  *PluginConfig
		want bool
	}{
		{"built-in", DefaultPluginConfig(), true},
		{"the repository's plugin.yaml", repoYAML, true},
		{"no discover", write(t, ""), false},
		{"empty discover", write(t, "  discover: {}\n"), false},
		{"fileName", write(t, "  discover: {fileName: olm-cmp.yaml}\n"), true},
		{"find.glob", write(t, "  discover: {find: {glob: '**/olm-cmp.yaml'}}\n"), true},
		{"find.command", write(t, "  discover: {find: {command: [sh, -c, 'ls olm-cmp.yaml']}}\n"), true},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			if got := c.cfg.DiscoveryConfigured(); got != c.want {
				t.Errorf("DiscoveryConfigured() = %v, want %v", got, c.want)
			}
			ts := startServer(t, &specEcho{}, func(o *ServerOptions) { o.Config = c.cfg })
			cfg, err := ts.client.CheckPluginConfiguration(ctxT(t), &emptypb.Empty{})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.IsDiscoveryConfigured != c.want || cfg.ProvideGitCreds {
				t.Errorf("CheckPluginConfiguration: %+v, want isDiscoveryConfigured=%v", cfg, c.want)
			}
			// MatchRepository says the same (Argo CD lets a named plugin
			// through a "no" only when discovery is not enabled).
			resp, err := ts.match(ctxT(t), t, call{tgz: tgzOf(t, repoDir), appRelPath: "apps/tiny"})
			if err != nil {
				t.Fatal(err)
			}
			if !resp.IsSupported || resp.IsDiscoveryEnabled != c.want {
				t.Errorf("MatchRepository: %+v, want isDiscoveryEnabled=%v", resp, c.want)
			}
		})
	}
}
