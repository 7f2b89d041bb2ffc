package cmpserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// The bad-input corpus through the channel Argo CD uses (issue 8): the same
// test/testdata/bad cases the CLI's TestBadInput runs, streamed as a
// repository tarball to GenerateManifest, plus what only a stream can get
// wrong (checksums, truncation, bombs, a client leaving halfway) and the
// plugin's own inputs (env and parameters). Every case asserts a status that
// is not OK, no manifests, the exact message, and a bounded time; the work
// directory is empty afterwards and TestMain's goleak finds no goroutine
// left.

// pluginCaseTimeout bounds each case: a hang fails the test, not the CI run.
const pluginCaseTimeout = 30 * time.Second

// pluginCase is one streamed request and what the plugin must answer.
type pluginCase struct {
	name string
	// call is the request; its tgz defaults to the demo repository.
	call call
	// raw, when set, sends these messages instead of call (protocol faults).
	raw []*pluginpb.AppStreamRequest
	// cancelHalfway makes the client send raw, then cancel instead of closing.
	cancelHalfway bool
	// limits, when set, start a server with them.
	limits Limits
	code   codes.Code
	want   string
}

func TestBadInputThroughThePlugin(t *testing.T) {
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{}))
	// The static corpus: each case laid over examples/demo at apps/demo.
	// Paths the CLI shows under the user's directory ($DIR) show relative
	// to the repository here, never as the server's temporary directory.
	for _, c := range badinput.Cases(t, "../../test/testdata/bad") {
		t.Run("static/"+c.Name, func(t *testing.T) {
			repo := t.TempDir()
			c.Prepare(t, "../../examples/demo", filepath.Join(repo, "apps", "demo"))
			want := strings.NewReplacer("$DIR", "apps/demo", "$TMP", "apps").Replace(c.WantPlugin(t))
			runPluginCase(t, ts, pluginCase{call: call{tgz: tgzOf(t, repo), appRelPath: "apps/demo"}, code: codes.InvalidArgument, want: want})
		})
	}
	for _, c := range streamCases(t) {
		t.Run("stream/"+c.name, func(t *testing.T) {
			s := ts
			if c.limits != (Limits{}) {
				s = startServer(t, engine.NewEngine(engine.EngineOptions{}), func(o *ServerOptions) { o.Limits = c.limits })
			}
			runPluginCase(t, s, c)
		})
	}
	for _, c := range envCases() {
		t.Run("env/"+c.name, func(t *testing.T) { runPluginCase(t, ts, c) })
	}
	// The canary reached no log line or metric either (the messages were
	// compared exactly above). TestCanaryCredentialNeverLeaks does the same
	// for the sidecar's docker config across registry faults.
	families, err := ts.m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var metrics strings.Builder
	for _, f := range families {
		metrics.WriteString(f.String())
	}
	for what, text := range map[string]string{"log": ts.logs.String(), "metrics": metrics.String()} {
		if strings.Contains(text, canary) || strings.Contains(text, base64.StdEncoding.EncodeToString([]byte("user:"+canary))) {
			t.Errorf("the canary credential appears in the %s:\n%s", what, grepLines(text, canary))
		}
	}
}

func runPluginCase(t *testing.T, ts *testServer, c pluginCase) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pluginCaseTimeout)
	defer cancel()
	start := time.Now()
	var resp *pluginpb.ManifestResponse
	var err error
	if c.raw != nil {
		s, serr := ts.client.GenerateManifest(ctx)
		if serr != nil {
			t.Fatal(serr)
		}
		for _, m := range c.raw {
			if s.Send(m) != nil {
				break // the server answered early; CloseAndRecv has it
			}
		}
		if c.cancelHalfway {
			waitInflight(t, ts, 1)
			cancel()
		}
		resp, err = s.CloseAndRecv()
	} else {
		if c.call.tgz == nil {
			c.call.tgz = tgzOf(t, repoDir)
		}
		resp, err = ts.generate(ctx, t, c.call)
	}
	st := status.Convert(err)
	if err == nil {
		t.Fatalf("rendered %d manifests instead of failing", len(resp.GetManifests()))
	}
	if len(resp.GetManifests()) > 0 {
		t.Errorf("a failed request carried %d manifests", len(resp.GetManifests()))
	}
	if st.Code() != c.code || st.Message() != c.want {
		t.Errorf("got %v %q\nwant %v %q", st.Code(), st.Message(), c.code, c.want)
	}
	if strings.Contains(st.Message(), ts.srv.o.WorkDir) || strings.Contains(st.Message(), "panic") || strings.Contains(st.Message(), "goroutine") {
		t.Errorf("the message exposes the server: %s", st.Message())
	}
	if d := time.Since(start); d > pluginCaseTimeout {
		t.Errorf("took %s", d)
	}
	waitInflightZero(t, ts)
	waitNoRequestDirs(t, ts)
}

// waitInflight waits until the server counts n requests in flight.
func waitInflight(t *testing.T, ts *testServer, n float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for metricValue(t, ts.m, engine.MetricInflight) != n {
		if time.Now().After(deadline) {
			t.Fatalf("never %v requests in flight", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func meta(checksum string, size int64) *pluginpb.AppStreamRequest {
	return &pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_Metadata{Metadata: &pluginpb.ManifestRequestMetadata{
		AppName: "tiny", AppRelPath: "apps/tiny", Checksum: checksum, Size: size,
		Env: []*pluginpb.EnvEntry{{Name: EnvAppName, Value: "tiny-app"}},
	}}}
}

func chunk(b []byte) *pluginpb.AppStreamRequest {
	return &pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_File{File: &pluginpb.File{Chunk: b}}}
}

// zeroBomb is a tar.gz holding one file of n zero bytes: n/1000 bytes on the
// wire.
func zeroBomb(t *testing.T, n int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Size: n, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(zero)) {
		tw.Write(zero[:min(int64(len(zero)), left)])
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func streamCases(t *testing.T) []pluginCase {
	good := tgzOf(t, repoDir)
	many := make([]tar.Header, 0, 2001)
	for i := range 2001 {
		many = append(many, tar.Header{Name: fmt.Sprintf("f%d", i), Typeflag: tar.TypeReg})
	}
	return []pluginCase{
		{name: "bad-checksum", call: call{appRelPath: "apps/tiny", checksum: strings.Repeat("0", 64)}, code: codes.DataLoss, want: "repository tarball checksum mismatch: got sha256 " + sum(good) + `, the metadata says "` + strings.Repeat("0", 64) + `" (the stream was truncated or corrupted)`},
		{name: "empty-stream", raw: []*pluginpb.AppStreamRequest{}, code: codes.InvalidArgument, want: "the request stream ended before its metadata message: the repo-server sent no repository (retry the refresh; if it persists, check the repo-server's log)"},
		{name: "metadata-only", raw: []*pluginpb.AppStreamRequest{meta(sum(good), int64(len(good)))}, code: codes.InvalidArgument, want: fmt.Sprintf("the repository tarball ended after 0 of the %d bytes its metadata announced (the stream was cut short: retry the refresh)", len(good))},
		{name: "truncated", raw: []*pluginpb.AppStreamRequest{meta(sum(good), int64(len(good))), chunk(good[:len(good)/2])}, code: codes.InvalidArgument, want: fmt.Sprintf("the repository tarball ended after %d of the %d bytes its metadata announced (the stream was cut short: retry the refresh)", len(good)/2, len(good))},
		{name: "chunk-before-metadata", raw: []*pluginpb.AppStreamRequest{chunk(good)}, code: codes.InvalidArgument, want: "protocol error: the first stream message must be the metadata"},
		{name: "not-gzip", raw: []*pluginpb.AppStreamRequest{meta(sum([]byte("plain text")), 10), chunk([]byte("plain text"))}, code: codes.InvalidArgument, want: "the repository tarball is not gzip: gzip: invalid header"},
		{name: "client-cancels-halfway", raw: []*pluginpb.AppStreamRequest{meta(sum(good), int64(len(good))), chunk(good[:len(good)/2])}, cancelHalfway: true, code: codes.Canceled, want: "context canceled"},
		{name: "declared-size-over-limit", raw: []*pluginpb.AppStreamRequest{meta(sum(good), 1<<40)}, code: codes.InvalidArgument, want: "the repository tarball is 1099511627776 bytes, over the 536870912-byte limit: exclude files with the repo-server's --plugin-tar-exclude or raise --max-tarball-bytes"},
		{name: "decompression-bomb", call: call{tgz: zeroBomb(t, 64<<20), appRelPath: "."}, limits: Limits{MaxExtracted: 1 << 20}, code: codes.InvalidArgument, want: "the repository expands to more than 1048576 bytes (--max-extract-bytes)"},
		{name: "entry-count-bomb", call: call{tgz: tgzEntries(t, many, nil), appRelPath: "."}, limits: Limits{MaxEntries: 2000}, code: codes.InvalidArgument, want: "the repository tarball has more than 2000 entries"},
		{name: "compressed-over-limit", call: call{tgz: good, appRelPath: "apps/tiny"}, limits: Limits{MaxCompressed: 100}, code: codes.InvalidArgument, want: fmt.Sprintf("the repository tarball is %d bytes, over the 100-byte limit: exclude files with the repo-server's --plugin-tar-exclude or raise --max-tarball-bytes", len(good))},
	}
}

// canary is a credential a user might put where it does not belong: in a
// plugin env variable or an Argo CD parameter. It must never come back.
const canary = "CANARY-SECRET-7f3a"

func envCases() []pluginCase {
	p := func(ps ...map[string]any) call { return call{appRelPath: "apps/tiny", params: ps} }
	e := func(kv ...string) call {
		env := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return call{appRelPath: "apps/tiny", env: env}
	}
	known := "; known fields: " + spec.ParamNames()
	b64 := base64.StdEncoding.EncodeToString([]byte("user:" + canary))
	ns := `spec.namespace "Not_A_Namespace": not a valid namespace name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters, e.g. "not-a-namespace"`
	return []pluginCase{
		{name: "unknown-parameter", call: p(map[string]any{"name": "namespac", "string": "x"}), code: codes.InvalidArgument, want: `parameter "namespac": unknown spec field "namespac"` + known},
		{name: "unknown-env", call: e("ARGOCD_ENV_NAME_SPACE_X", "x"), code: codes.InvalidArgument, want: `plugin env ARGOCD_ENV_NAME_SPACE_X: unknown spec field "NAME_SPACE_X"` + known},
		{name: "parameter-list-for-string", call: p(map[string]any{"name": "namespace", "array": []string{"a", "b"}}), code: codes.InvalidArgument, want: `parameter "namespace": namespace takes a single string: set the parameter's "string", not "array"`},
		{name: "parameter-map-for-list", call: p(map[string]any{"name": "exclude", "map": map[string]string{"a": "b"}}), code: codes.InvalidArgument, want: `parameter "exclude": exclude takes a list: set the parameter's "array", not "map"`},
		{name: "parameter-not-a-bool", call: p(map[string]any{"name": "createNamespace", "string": "maybe"}), code: codes.InvalidArgument, want: `parameter "createNamespace": createNamespace must be true or false, got "maybe"`},
		{name: "env-not-a-bool", call: e("ARGOCD_ENV_CREATE_NAMESPACE", "maybe"), code: codes.InvalidArgument, want: `plugin env ARGOCD_ENV_CREATE_NAMESPACE: createNamespace must be true or false, got "maybe"`},
		{name: "env-bad-namespace", call: e("ARGOCD_ENV_NAMESPACE", "Not_A_Namespace"), code: codes.InvalidArgument, want: ns},
		// OLM v1's values, case-sensitive, as a parameter too.
		{name: "parameter-upgrade-policy-typo", call: p(map[string]any{"name": "upgradeConstraintPolicy", "string": "selfcertified"}), code: codes.InvalidArgument,
			want: `spec.upgradeConstraintPolicy "selfcertified": not a policy: use CatalogProvided (the default: the upgrade must follow the catalog's, or the CSVs', replaces, skips or olm.skipRange) or SelfCertified (any version: you have checked the upgrade yourself), as OLM v1 spells them; did you mean SelfCertified?`},
		{name: "parameter-structured-not-yaml", call: p(map[string]any{"name": "syncWaves", "string": "crds: [1"}), code: codes.InvalidArgument, want: `parameter "syncWaves": syncWaves must be JSON or YAML: line 1: the list that starts with '[' here has no closing ']': add it after the last item`},
		{name: "parameters-not-json", call: e(EnvParameters, "{not json"), code: codes.InvalidArgument, want: "ARGOCD_APP_PARAMETERS is not the JSON list Argo CD sends: invalid character 'n' looking for beginning of object key string"},
		// The canary: a credential where it does not belong. The message
		// names where it was, never what it was.
		{name: "canary-unknown-env", call: e("ARGOCD_ENV_REGISTRY_PASSWORD", canary), code: codes.InvalidArgument, want: `plugin env ARGOCD_ENV_REGISTRY_PASSWORD: unknown spec field "REGISTRY_PASSWORD"` + known},
		{name: "canary-unknown-parameter", call: p(map[string]any{"name": "registryPassword", "string": canary}), code: codes.InvalidArgument, want: `parameter "registryPassword": unknown spec field "registryPassword"` + known},
		{name: "canary-base64-in-env", call: e("ARGOCD_ENV_AUTH", b64), code: codes.InvalidArgument, want: `plugin env ARGOCD_ENV_AUTH: unknown spec field "AUTH"` + known},
		{name: "canary-in-bundle-reference", call: p(map[string]any{"name": "bundle", "string": "user:" + canary + "@quay.io/x/y:v1"}), code: codes.InvalidArgument, want: "spec.bundle holds a credential (user:password@ before the registry): remove it; registry credentials belong in the sidecar's docker config (docs/operations.md)"},
		// Unbounded echoes: Argo CD stores the message in the Application's
		// status, so a value comes back at most 120 characters long (with
		// its size) and escaped, and the whole message at most 4 KiB.
		{name: "env-200KB-value", call: e("ARGOCD_ENV_NAMESPACE", strings.Repeat("a", 200000)), code: codes.InvalidArgument, want: `spec.namespace "` + strings.Repeat("a", 120) + `"… (200000 bytes): not a valid namespace name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`},
		{name: "env-200KB-bundle", call: e("ARGOCD_ENV_BUNDLE", "quay.io/x/"+strings.Repeat("c", 200000)+":v1"), code: codes.InvalidArgument, want: `spec.bundle "quay.io/x/` + strings.Repeat("c", 110) + `"… (200013 bytes) is neither a directory (write ./path) nor an image reference (registry/repository:tag or @sha256:digest): could not parse reference: quay.io/x/` + strings.Repeat("c", 83) + `… (200040 bytes)`},
		{name: "parameter-100KB-clusterAPI", call: p(map[string]any{"name": "clusterAPIs", "array": []string{strings.Repeat("b", 100000)}}), code: codes.InvalidArgument, want: `spec.clusterAPIs[0] "` + strings.Repeat("b", 120) + `"… (100000 bytes): not an API group: use group/version, e.g. monitoring.coreos.com/v1`},
		{name: "parameter-5000-alternative-range", call: p(map[string]any{"name": "catalog", "string": "quay.io/x/catalog:v1"}, map[string]any{"name": "package", "string": "tiny"}, map[string]any{"name": "version", "string": strings.Repeat(">=1.0.0 <2.0.0 || ", 5000) + "bogus"}), code: codes.InvalidArgument, want: `spec.version "` + strings.Repeat(">=1.0.0 <2.0.0 || ", 7)[:120] + `"… (90005 bytes): not a version range (e.g. 1.2.x, ">=1.0.0 <2", 1.2.3): improper constraint:  bogus`},
		{name: "parameter-name-with-escapes", call: p(map[string]any{"name": "ns\x1b[2J\n", "string": "x"}), code: codes.InvalidArgument, want: `parameter "ns\x1b[2J\n": unknown spec field "ns\x1b[2J\n"` + known},
		{name: "parameter-5000-bad-watch-namespaces", call: p(map[string]any{"name": "watchNamespaces", "array": slices.Repeat([]string{"Bad_NS"}, 5000)}), code: codes.InvalidArgument, want: manyProblems("spec.watchNamespaces[%d] \"Bad_NS\": "+strings.TrimSuffix(ns[len(`spec.namespace "Not_A_Namespace": `):], `"not-a-namespace"`)+`"bad-ns"`, 5000)},
		{name: "canary-in-catalog-reference", call: p(map[string]any{"name": "catalog", "string": "user:" + canary + "@quay.io/x/catalog:v1"}, map[string]any{"name": "package", "string": "tiny"}), code: codes.InvalidArgument, want: "spec.catalog holds a credential (user:password@ before the registry): remove it; registry credentials belong in the sidecar's docker config (docs/operations.md)"},
	}
}

// manyProblems is the message of n problems (format holds the index), as
// the plugin sends it: whole problems up to 4 KiB, then how many more.
func manyProblems(format string, n int) string {
	var b strings.Builder
	for i := range n {
		line := fmt.Sprintf(format, i)
		more := fmt.Sprintf("\n…and %d more problems", n-i)
		if b.Len()+1+len(line)+len(more) > 4096 {
			return b.String() + more
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String()
}

func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
