package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// faultRegistry is go-containerregistry's in-memory registry behind a
// handler that, while enabled, fails a share of requests the ways a real
// registry or the network between fails: a 500, a connection reset before
// any answer, and a reset halfway through the body (a partial layer, which
// the server must never render or cache as if it were whole).
type faultRegistry struct {
	next    http.Handler
	rate    float64
	enabled atomic.Bool

	mu  sync.Mutex
	rng *rand.Rand

	requests, status500, resets, truncated atomic.Int64
}

func newFaultRegistry(rate float64, seed uint64) *faultRegistry {
	return &faultRegistry{
		next: registry.New(registry.Logger(log.New(io.Discard, "", 0))),
		rate: rate,
		rng:  rand.New(rand.NewPCG(seed, 0x5eed)),
	}
}

// pick returns the fault for this request: 0 none, 1 a 500, 2 a reset, 3 a
// truncated body. A failing blob download is always cut halfway: that is
// the fault that must never turn into a partial bundle.
func (f *faultRegistry) pick(r *http.Request) int {
	if !f.enabled.Load() {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.rate {
		return 0
	}
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
		return 3
	}
	return 1 + f.rng.IntN(3)
}

func (f *faultRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	switch f.pick(r) {
	case 0:
		f.next.ServeHTTP(w, r)
	case 1:
		f.status500.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"errors":[{"code":"UNKNOWN","message":"injected fault"}]}`)
	case 2:
		f.resets.Add(1)
		resetAfter(w, nil)
	case 3:
		// Answer in full into a recorder, then send the status, the headers
		// (with the full Content-Length) and half the body, and reset.
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		if r.Method != http.MethodGet || rec.Body.Len() < 2 {
			f.resets.Add(1)
			resetAfter(w, nil)
			return
		}
		f.truncated.Add(1)
		var head bytes.Buffer
		fmt.Fprintf(&head, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
		h := rec.Header().Clone()
		h.Set("Content-Length", fmt.Sprint(rec.Body.Len()))
		h.Write(&head)
		head.WriteString("\r\n")
		head.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
		resetAfter(w, head.Bytes())
	}
}

// resetAfter writes raw bytes on the connection, then closes it with an RST
// (SO_LINGER 0) instead of an orderly FIN.
func resetAfter(w http.ResponseWriter, raw []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil { // only HTTP/2 cannot, and the registry speaks plain HTTP/1.1
		http.Error(w, "injected fault", http.StatusBadGateway)
		return
	}
	if len(raw) > 0 {
		buf.Write(raw)
		buf.Flush()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

func (f *faultRegistry) faults() int64 {
	return f.status500.Load() + f.resets.Load() + f.truncated.Load()
}

// registryServer serves a registry handler on 127.0.0.1.
type registryServer struct {
	host string
	srv  *http.Server
	done chan struct{}
}

func startRegistry(reg http.Handler) (*registryServer, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &registryServer{host: lis.Addr().String(), done: make(chan struct{}),
		srv: &http.Server{Handler: reg, ErrorLog: log.New(io.Discard, "", 0)}}
	go func() {
		defer close(r.done)
		r.srv.Serve(lis)
	}()
	return r, nil
}

// dropIdle closes the keep-alive connections idle between requests. The
// olm-cmp server pools its registry connections (each holds two goroutines
// until its idle timeout, 90 s); dropping them from this side lets the
// goroutine count come back to its baseline without waiting that long. A
// goroutine a request leaked stays counted.
func (r *registryServer) dropIdle() {
	r.srv.SetKeepAlivesEnabled(false) // closes the idle connections
	r.srv.SetKeepAlivesEnabled(true)
}

func (r *registryServer) stop() {
	r.srv.Close()
	<-r.done
}

// pushBundle pushes dir's manifests/ and metadata/ as a one-layer image to
// host/bundles/<repo>:<tag> and returns the manifest digest. The layer is
// built deterministically (sorted entries, fixed modes); every entry has
// mtime, so images of the same files with different mtimes differ only in
// their digests.
func pushBundle(host, repo, tag, dir string, mtime time.Time) (string, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var paths []string
	for _, sub := range []string{"manifests", "metadata"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			paths = append(paths, p)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Typeflag: tar.TypeReg, ModTime: mtime, Format: tar.FormatPAX}
		var data []byte
		if fi.IsDir() {
			h.Name += "/"
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else if data, err = os.ReadFile(p); err != nil {
			return "", err
		}
		h.Size = int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return "", err
		}
		tw.Write(data)
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", err
	}
	ref, err := name.NewTag(host+"/bundles/"+repo+":"+tag, name.Insecure)
	if err != nil {
		return "", err
	}
	if err := remote.Write(ref, img); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}
