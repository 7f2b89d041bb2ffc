package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
)

// callTimeout bounds one call from the client's side, far above any honest
// answer: a call that reaches it is a server that stopped answering.
const callTimeout = 2 * time.Minute

// chunkSize is Argo CD's default CMP tar chunk size.
const chunkSize = 1024

// maxMessage bounds the answer a client accepts (sail-operator is ~3 MB).
const maxMessage = 256 << 20

func dial(socket string) (*grpc.ClientConn, pluginpb.ConfigManagementPluginServiceClient, error) {
	conn, err := grpc.NewClient("unix://"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)))
	if err != nil {
		return nil, nil, err
	}
	return conn, pluginpb.NewConfigManagementPluginServiceClient(conn), nil
}

// request is one GenerateManifest call to make.
type request struct {
	s       *scenario
	appName string
	destNS  string
	cancel  int           // 0 no; 1 halfway through the upload; 2 after the upload, while the server works
	delay   time.Duration // with cancel 2: how long after the upload
}

// outcome is what one call got.
type outcome struct {
	req       request
	latency   time.Duration
	manifests []string
	code      codes.Code
	msg       string
}

// generate streams the repository as Argo CD's repo-server does: the
// metadata message (application path, checksum, size, env), then the tarball
// in chunks; then it waits for the answer.
func generate(ctx context.Context, c pluginpb.ConfigManagementPluginServiceClient, repo []byte, checksum string, r request) outcome {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	o := outcome{req: r}
	finish := func(resp *pluginpb.ManifestResponse, err error) outcome {
		o.latency = time.Since(start)
		if err != nil {
			st, _ := status.FromError(err)
			o.code, o.msg = st.Code(), st.Message()
			return o
		}
		o.manifests = resp.GetManifests()
		return o
	}
	stream, err := c.GenerateManifest(ctx)
	if err != nil {
		return finish(nil, err)
	}
	env := []*pluginpb.EnvEntry{
		{Name: "ARGOCD_APP_NAME", Value: r.appName},
		{Name: "ARGOCD_APP_NAMESPACE", Value: r.destNS},
		{Name: "ARGOCD_APP_PROJECT_NAME", Value: "default"},
		{Name: "ARGOCD_APP_REVISION", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Name: "ARGOCD_APP_SOURCE_PATH", Value: r.s.app},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: "https://git.example.com/fleet.git"},
		{Name: "KUBE_VERSION", Value: "1.33"},
	}
	for _, kv := range r.s.environ(nil) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, &pluginpb.EnvEntry{Name: k, Value: v})
	}
	err = stream.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_Metadata{Metadata: &pluginpb.ManifestRequestMetadata{
		AppName: r.appName, AppRelPath: r.s.app, Checksum: checksum, Size: int64(len(repo)), Env: env,
	}}})
	for i, b := 0, repo; err == nil && len(b) > 0; i++ {
		if r.cancel == 1 && len(b) <= len(repo)/2 {
			cancel()
		}
		n := min(chunkSize, len(b))
		err = stream.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_File{File: &pluginpb.File{Chunk: b[:n]}}})
		b = b[n:]
	}
	if err != nil && !errors.Is(err, io.EOF) { // io.EOF: the server answered early; CloseAndRecv has it
		return finish(nil, err)
	}
	if r.cancel == 2 {
		t := time.AfterFunc(r.delay, cancel)
		defer t.Stop()
	}
	return finish(stream.CloseAndRecv())
}

// canonical is a manifest as the repo-server ends up reading it: YAML or JSON
// through sigs.k8s.io/yaml (what Argo CD uses), re-encoded as JSON with
// sorted keys and numbers kept as written.
func canonical(doc string) (string, error) {
	js, err := sigsyaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	return string(out), err
}

// verifier checks answers against each scenario's reference render. The
// first answer of a scenario is compared manifest by manifest in canonical
// form; every later one must be byte-equal to it (the server's output is
// deterministic), so comparing costs a hash.
type verifier struct {
	mu    sync.Mutex
	first map[*scenario][32]byte
}

func newVerifier() *verifier { return &verifier{first: map[*scenario][32]byte{}} }

func hashManifests(ms []string) [32]byte {
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d\x00%s", len(m), m)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// check returns "" when the answer is right, else what is wrong.
func (v *verifier) check(s *scenario, manifests []string) string {
	sum := hashManifests(manifests)
	v.mu.Lock()
	first, seen := v.first[s]
	v.mu.Unlock()
	if seen {
		if sum != first {
			return "answer differs byte-wise from this scenario's earlier answers"
		}
		return ""
	}
	if len(manifests) != len(s.reference) {
		return fmt.Sprintf("%d manifests, the reference render has %d", len(manifests), len(s.reference))
	}
	for i, m := range manifests {
		c, err := canonical(m)
		if err != nil {
			return fmt.Sprintf("manifest %d does not parse: %v", i, err)
		}
		if c != s.reference[i] {
			return fmt.Sprintf("manifest %d differs from the reference render:\n  got  %.300s\n  want %.300s", i, c, s.reference[i])
		}
	}
	v.mu.Lock()
	if prev, ok := v.first[s]; ok && prev != sum {
		v.mu.Unlock()
		return "answer differs byte-wise from this scenario's earlier answers"
	}
	v.first[s] = sum
	v.mu.Unlock()
	return ""
}

// jargon is text a user-facing error must not hold: crash traces, Go
// runtime vocabulary.
var jargon = []string{"panic", "runtime error", "goroutine ", "nil pointer", "invalid memory address", "index out of range", "SIGSEGV"}

// unclear returns why an error message is not a clear one ("" if it is):
// empty, Go jargon, or a path private to the server.
func unclear(msg string, serverPaths ...string) string {
	if strings.TrimSpace(msg) == "" {
		return "empty error message"
	}
	for _, j := range jargon {
		if strings.Contains(msg, j) {
			return fmt.Sprintf("error holds %q", j)
		}
	}
	for _, p := range serverPaths {
		if p != "" && strings.Contains(msg, p) {
			return "error shows a server-side path"
		}
	}
	return ""
}
