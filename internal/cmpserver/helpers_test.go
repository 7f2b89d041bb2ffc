package cmpserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/engine"
)

func TestMain(m *testing.M) {
	inprocess.Install() // renders check what olm-cmp-check checks in this process
	goleak.VerifyTestMain(m)
}

// repoDir is the test repository: apps/tiny renders bundles/tiny.
const repoDir = "testdata/repo"

// tgzOf packs dir the way Argo CD's repo-server does: paths relative to the
// root, directories and symbolic links as entries, modes reset.
func tgzOf(t testing.TB, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			link, _ = os.Readlink(p)
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// tgzEntries builds a tarball from raw headers (for hostile tarballs).
func tgzEntries(t testing.TB, entries []tar.Header, contents map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		h := h
		data := contents[h.Name]
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(data))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(data))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// testServer is a Server on a unix socket in a temporary directory and a
// client built from our own stubs.
type testServer struct {
	srv    *Server
	client pluginpb.ConfigManagementPluginServiceClient
	conn   *grpc.ClientConn
	logs   *syncBuffer
	m      *engine.Metrics
	done   chan error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startServer(t testing.TB, r engine.Renderer, mutate ...func(*ServerOptions)) *testServer {
	t.Helper()
	ts := &testServer{logs: &syncBuffer{}, m: engine.NewMetrics(), done: make(chan error, 1)}
	// Socket paths are limited to ~108 bytes: t.TempDir() can be too long.
	sockDir, err := os.MkdirTemp("", "olmcmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	o := ServerOptions{
		SocketDir: sockDir,
		WorkDir:   t.TempDir(),
		Renderer:  r,
		Logger:    slog.New(slog.NewJSONHandler(ts.logs, nil)),
		Metrics:   ts.m,
	}
	for _, f := range mutate {
		f(&o)
	}
	ts.srv = NewServer(o)
	lis, err := ts.srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go func() { ts.done <- ts.srv.Serve(lis) }()
	ts.conn, err = grpc.NewClient("unix://"+ts.srv.SocketPath(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)))
	if err != nil {
		t.Fatal(err)
	}
	ts.client = pluginpb.NewConfigManagementPluginServiceClient(ts.conn)
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) stop() {
	ts.conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.srv.Shutdown(ctx)
	<-ts.done
}

// call describes one streamed request.
type call struct {
	tgz        []byte
	appRelPath string
	env        map[string]string
	params     []map[string]any // ARGOCD_APP_PARAMETERS entries
	rawEnv     []string         // NAME=VALUE entries sent as they are, repeats included
	checksum   string           // default: the right one
}

func (c call) send(t testing.TB, s interface {
	Send(*pluginpb.AppStreamRequest) error
}) {
	t.Helper()
	env := []*pluginpb.EnvEntry{{Name: EnvAppName, Value: "tiny-app"}, {Name: EnvAppNamespace, Value: "argocd"}}
	for k, v := range c.env {
		env = append(env, &pluginpb.EnvEntry{Name: k, Value: v})
	}
	for _, kv := range c.rawEnv {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, &pluginpb.EnvEntry{Name: k, Value: v})
	}
	if c.params != nil {
		js, _ := json.Marshal(c.params)
		env = append(env, &pluginpb.EnvEntry{Name: EnvParameters, Value: string(js)})
	}
	cs := c.checksum
	if cs == "" {
		cs = sum(c.tgz)
	}
	if err := s.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_Metadata{Metadata: &pluginpb.ManifestRequestMetadata{
		AppName: filepath.Base(c.appRelPath), AppRelPath: c.appRelPath, Checksum: cs, Size: int64(len(c.tgz)), Env: env,
	}}}); err != nil {
		if err == io.EOF {
			return // the server answered before reading anything
		}
		t.Fatal(err)
	}
	// Argo CD's default chunk size.
	for b := c.tgz; len(b) > 0; {
		n := min(1024, len(b))
		if err := s.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_File{File: &pluginpb.File{Chunk: b[:n]}}}); err != nil {
			if err == io.EOF {
				return // the server answered early; CloseAndRecv has its status
			}
			t.Fatal(err)
		}
		b = b[n:]
	}
}

func (ts *testServer) generate(ctx context.Context, t testing.TB, c call) (*pluginpb.ManifestResponse, error) {
	t.Helper()
	s, err := ts.client.GenerateManifest(ctx)
	if err != nil {
		return nil, err
	}
	c.send(t, s)
	return s.CloseAndRecv()
}

func (ts *testServer) match(ctx context.Context, t testing.TB, c call) (*pluginpb.RepositoryResponse, error) {
	t.Helper()
	s, err := ts.client.MatchRepository(ctx)
	if err != nil {
		return nil, err
	}
	c.send(t, s)
	return s.CloseAndRecv()
}

func (ts *testServer) announce(ctx context.Context, t testing.TB, c call) (*pluginpb.ParametersAnnouncementResponse, error) {
	t.Helper()
	s, err := ts.client.GetParametersAnnouncement(ctx)
	if err != nil {
		return nil, err
	}
	c.send(t, s)
	return s.CloseAndRecv()
}

// fakeStream feeds receiveRepo directly: a string is a metadata message with
// that checksum, an int64 one with that size, []byte a chunk, an error a
// failed Recv; then io.EOF.
type fakeStream struct{ msgs []any }

func (f *fakeStream) Recv() (*pluginpb.AppStreamRequest, error) {
	if len(f.msgs) == 0 {
		return nil, io.EOF
	}
	m := f.msgs[0]
	f.msgs = f.msgs[1:]
	switch v := m.(type) {
	case string:
		return &pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_Metadata{Metadata: &pluginpb.ManifestRequestMetadata{Checksum: v}}}, nil
	case int64:
		return &pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_Metadata{Metadata: &pluginpb.ManifestRequestMetadata{Size: v}}}, nil
	case []byte:
		return &pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_File{File: &pluginpb.File{Chunk: v}}}, nil
	case error:
		return nil, v
	}
	panic("bad fake message")
}

// metricValue reads one series of m (a counter or gauge) by name and label
// values in label-name order (as Gather sorts them); 0 when the series does not exist yet.
func metricValue(t *testing.T, m *engine.Metrics, name string, labels ...string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			if len(s.GetLabel()) != len(labels) {
				continue
			}
			for i, l := range s.GetLabel() {
				if l.GetValue() != labels[i] {
					continue series
				}
			}
			if c := s.GetCounter(); c != nil {
				return c.GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	return 0
}
