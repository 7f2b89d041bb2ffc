package bundle

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/registry"
)

// sameBundle fails unless a and b hold the same content, objects compared
// byte for byte as serialized YAML.
func sameBundle(t *testing.T, a, b *Bundle) {
	t.Helper()
	if a.Package != b.Package || a.CSVFile != b.CSVFile {
		t.Errorf("package/CSV file differ: %q %q vs %q %q", a.Package, a.CSVFile, b.Package, b.CSVFile)
	}
	if !reflect.DeepEqual(a.Annotations, b.Annotations) || !reflect.DeepEqual(a.Properties, b.Properties) || !reflect.DeepEqual(a.Dependencies, b.Dependencies) {
		t.Errorf("metadata differs")
	}
	if !reflect.DeepEqual(a.CSV, b.CSV) {
		t.Errorf("CSV differs")
	}
	for _, pair := range [][2][]Object{{a.CRDs, b.CRDs}, {a.Others, b.Others}} {
		x, y := pair[0], pair[1]
		if len(x) != len(y) {
			t.Errorf("%d objects vs %d", len(x), len(y))
			continue
		}
		for i := range x {
			if x[i].File != y[i].File || mustString(t, x[i]) != mustString(t, y[i]) {
				t.Errorf("object %d (%s %s) differs", i, x[i].File, x[i].GetName())
			}
		}
	}
}

func newLoader(t *testing.T, host string) *ImageLoader {
	return &ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
}

// cacheEntries lists what the cache holds, relative to it, two levels deep.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	algos, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range algos {
		subs, err := os.ReadDir(filepath.Join(dir, a.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			out = append(out, a.Name()+"/"+s.Name())
		}
	}
	return out
}

func TestImageLoadMatchesDir(t *testing.T) {
	host, reqs := bundletest.NewRegistry(t)
	digest := bundletest.PushDir(t, host, "operators/widget", "v1", "testdata/good")
	l := newLoader(t, host)
	ctx := context.Background()

	o, err := l.Resolve(ctx, host+"/operators/widget:v1")
	if err != nil {
		t.Fatal(err)
	}
	if o.Digest != digest || o.Image != host+"/operators/widget@"+digest || o.Ref != host+"/operators/widget:v1" || o.Dir != "" {
		t.Fatalf("Resolve = %+v, want digest %s", o, digest)
	}
	reqs.Reset()
	got, err := l.Load(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if reqs.BlobGets() == 0 {
		t.Fatalf("first load made no blob requests: %v", reqs.Requests())
	}
	want, err := LoadDir("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, got, want)
	hex := strings.TrimPrefix(digest, "sha256:")
	if got.Origin.Digest != digest || got.Origin.Image != o.Image || got.Origin.Dir != filepath.Join(l.CacheDir, "sha256", hex) {
		t.Errorf("Origin = %+v", got.Origin)
	}
	// Only the bundle directories were extracted, with no temporary leftovers.
	if e := cacheEntries(t, l.CacheDir); !slices.Equal(e, []string{"sha256/" + hex}) {
		t.Errorf("cache holds %v", e)
	}
	top, _ := os.ReadDir(got.Origin.Dir)
	var names []string
	for _, e := range top {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"manifests", "metadata"}) {
		t.Errorf("cache entry holds %v", names)
	}

	// Second load: from the cache, no registry traffic. A new loader sharing
	// the directory (another process) hits it too.
	reqs.Reset()
	again, err := l.Load(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, again, want)
	other := &ImageLoader{CacheDir: l.CacheDir, Insecure: []string{host}}
	if _, err := other.Load(ctx, o); err != nil {
		t.Fatal(err)
	}
	if n := reqs.Total(); n != 0 {
		t.Errorf("cached loads made %d registry requests: %v", n, reqs.Requests())
	}
	// The objects of two loads are independent.
	if err := again.Others[0].SetName("changed"); err != nil {
		t.Fatal(err)
	}
	if got.Others[0].GetName() == "changed" {
		t.Error("two loads share object nodes")
	}

	// A digest reference resolves without asking the registry.
	reqs.Reset()
	od, err := l.Resolve(ctx, o.Image)
	if err != nil || od.Digest != digest {
		t.Errorf("Resolve(digest ref) = %+v, %v", od, err)
	}
	if reqs.Total() != 0 {
		t.Errorf("resolving a digest reference made requests: %v", reqs.Requests())
	}
}

func TestImageCorpusSail(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "bundles", "sailoperator-1.30.3")
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "sail", "1.30.3", dir)
	l := newLoader(t, host)
	o, err := l.Resolve(context.Background(), host+"/sail:1.30.3")
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Load(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, got, want)
}

func TestImageTagMoves(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	d1 := bundletest.PushDir(t, host, "widget", "stable", "testdata/good")
	l := newLoader(t, host)
	ctx := context.Background()
	o1, err := l.Resolve(ctx, host+"/widget:stable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(ctx, o1); err != nil { // cache the first digest
		t.Fatal(err)
	}

	newer := copyDir(t, "testdata/good")
	csv := filepath.Join(newer, "manifests", "widget-operator.clusterserviceversion.yaml")
	data, _ := os.ReadFile(csv)
	if err := os.WriteFile(csv, []byte(strings.ReplaceAll(string(data), "1.0.0", "1.1.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	d2 := bundletest.PushDir(t, host, "widget", "stable", newer)
	if d1 == d2 {
		t.Fatal("test images have the same digest")
	}
	o2, err := l.Resolve(ctx, host+"/widget:stable")
	if err != nil {
		t.Fatal(err)
	}
	if o1.Digest != d1 || o2.Digest != d2 {
		t.Fatalf("resolved %s then %s, want %s then %s", o1.Digest, o2.Digest, d1, d2)
	}
	b, err := l.Load(ctx, o2)
	if err != nil {
		t.Fatal(err)
	}
	if v := b.CSV.Spec.Version.String(); v != "1.1.0" {
		t.Errorf("loaded version %s after the tag moved, want 1.1.0", v)
	}
}

func TestImageConcurrentLoadsPullOnce(t *testing.T) {
	const n = 8
	host, reqs := bundletest.NewRegistry(t)
	digest := bundletest.PushDir(t, host, "widget", "v1", "testdata/good")
	l := newLoader(t, host)
	o, err := l.Resolve(context.Background(), host+"/widget:v1")
	if err != nil {
		t.Fatal(err)
	}
	// Hold every caller at the door of the pull until all n are there, so
	// they overlap for certain; without single-flight each would pull.
	var arrived sync.WaitGroup
	arrived.Add(n)
	l.waiting = func() { arrived.Done(); arrived.Wait() }
	reqs.Reset()

	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = l.Load(context.Background(), o) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	manifests := reqs.Count(func(r bundletest.Request) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/manifests/"+digest)
	})
	if manifests != 1 {
		t.Errorf("%d loads fetched the manifest %d times, want once; requests: %v", n, manifests, reqs.Requests())
	}
}

func TestImageWhiteoutsAndLayerOrder(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	base := bundletest.DirEntries(t, "testdata/good")
	stale := bundletest.File("manifests/stale.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stale\n")
	override := bundletest.File("manifests/multi.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: from-top-layer\n")
	img := bundletest.Image(t,
		bundletest.Layer(t, append(base, stale)...),
		bundletest.Layer(t, bundletest.Whiteout("manifests/stale.yaml"), override),
	)
	bundletest.Push(t, host, "layered", "v1", img)
	l := newLoader(t, host)
	o, err := l.Resolve(context.Background(), host+"/layered:v1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Load(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, obj := range b.Others {
		names = append(names, obj.File+":"+obj.GetName())
	}
	want := []string{
		"manifests/config.json:widget-config", "manifests/config.json:widget-token",
		"manifests/multi.yaml:from-top-layer",
		"manifests/rbac-list.yaml:widget-viewer", "manifests/rbac-list.yaml:widget-editor",
	}
	if !slices.Equal(names, want) {
		t.Errorf("objects %v\nwant %v", names, want)
	}
}

func TestImageRefusesHostileLayers(t *testing.T) {
	base := bundletest.DirEntries(t, "testdata/good")
	big := make([]byte, 1<<20) // zeros: tiny compressed, large uncompressed
	for name, tc := range map[string]struct {
		entries  []bundletest.Entry
		maxBytes int64
		want     string
	}{
		"dot-dot path":       {entries: []bundletest.Entry{bundletest.File("../escaped.yaml", "x")}, want: "`..`"},
		"nested dot-dot":     {entries: []bundletest.Entry{bundletest.File("manifests/../../escaped.yaml", "x")}, want: "`..`"},
		"absolute path":      {entries: []bundletest.Entry{bundletest.File("/manifests/abs.yaml", "x")}, want: "absolute path"},
		"escaping symlink":   {entries: []bundletest.Entry{bundletest.Symlink("manifests/passwd.yaml", "../../../../etc/passwd")}, want: "is a link"},
		"symlinked dir":      {entries: []bundletest.Entry{bundletest.Symlink("metadata", "/etc")}, want: "is a link"},
		"hard link":          {entries: []bundletest.Entry{{Name: "manifests/hard.yaml", Type: '1', Linkname: "etc/passwd"}}, want: "is a link"},
		"device":             {entries: []bundletest.Entry{{Name: "manifests/dev", Type: '3'}}, want: "unsupported type"},
		"oversized content":  {entries: []bundletest.Entry{{Name: "junk.bin", Body: big}}, maxBytes: 512 << 10, want: "uncompressed size limit"},
		"oversized manifest": {entries: []bundletest.Entry{{Name: "manifests/big.yaml", Body: big}}, maxBytes: 512 << 10, want: "uncompressed size limit"},
		"compressed size":    {maxBytes: 100, want: "compressed, over the 100 byte limit"},
	} {
		t.Run(name, func(t *testing.T) {
			host, _ := bundletest.NewRegistry(t)
			img := bundletest.Image(t, bundletest.Layer(t, base...), bundletest.Layer(t, tc.entries...))
			bundletest.Push(t, host, "hostile", "v1", img)
			work := t.TempDir() // the cache and its neighbourhood
			cache := filepath.Join(work, "a", "b", "cache")
			l := &ImageLoader{CacheDir: cache, Insecure: []string{host}, MaxBytes: tc.maxBytes}
			o, err := l.Resolve(context.Background(), host+"/hostile:v1")
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Load(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error = %v, want it to mention %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), o.Image) {
				t.Errorf("error %q does not name the image", err)
			}
			// Nothing written anywhere: no cache entry, no temporary directory,
			// nothing beside the cache.
			var files []string
			filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			if len(files) != 0 {
				t.Errorf("files left behind: %v", files)
			}
			if e := cacheEntries(t, cache); len(e) != 0 {
				t.Errorf("cache holds %v", e)
			}
		})
	}
}

func TestImageLoadWithoutCacheDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "widget", "v1", "testdata/good")
	l := &ImageLoader{Insecure: []string{host}}
	o, err := l.Resolve(context.Background(), host+"/widget:v1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Load(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if b.Package != "widget-operator" || b.Origin.Dir != "" {
		t.Errorf("loaded %q from %q", b.Package, b.Origin.Dir)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestImageRegistryErrors(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "widget", "v1", "testdata/good")
	ctx := context.Background()

	// Plain HTTP is opt-in, even for a loopback registry.
	strict := &ImageLoader{CacheDir: t.TempDir()}
	if _, err := strict.Resolve(ctx, host+"/widget:v1"); err == nil || !strings.Contains(err.Error(), "refusing plain HTTP") {
		t.Errorf("Resolve without Insecure: %v", err)
	}
	l := newLoader(t, host)
	if _, err := l.Resolve(ctx, host+"/widget:nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Resolve of a missing tag: %v", err)
	}
	if _, err := l.Resolve(ctx, "Not A Reference!"); err == nil || !strings.Contains(err.Error(), "image reference") {
		t.Errorf("Resolve of a bad reference: %v", err)
	}
	if _, err := l.Load(ctx, Origin{Ref: "x"}); err == nil {
		t.Error("Load of an empty origin succeeded")
	}
	if _, err := l.Load(ctx, Origin{Image: host + "/widget:v1"}); err == nil || !strings.Contains(err.Error(), "not pinned by digest") {
		t.Errorf("Load of a tag: %v", err)
	}
	missing := host + "/widget@sha256:" + strings.Repeat("0", 64)
	if _, err := l.Load(ctx, Origin{Image: missing}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Load of a missing digest: %v", err)
	}
}

func TestImageRegistryConfigAuth(t *testing.T) {
	const password = "s3cret-p4ss"
	host, _ := bundletest.NewAuthRegistry(t, "robot", password)
	bundletest.PushDir(t, host, "private", "v1", "testdata/good")
	ctx := context.Background()
	cfg := filepath.Join(t.TempDir(), "config.json")
	auth := base64.StdEncoding.EncodeToString([]byte("robot:" + password))
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	// Keep the test independent of the machine's docker login.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", "")

	anon := newLoader(t, host)
	_, err := anon.Resolve(ctx, host+"/private:v1")
	if err == nil || !strings.Contains(err.Error(), "access denied") {
		t.Fatalf("Resolve without credentials: %v", err)
	}

	l := newLoader(t, host)
	l.RegistryConfig = cfg
	o, err := l.Resolve(ctx, host+"/private:v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(ctx, o); err != nil {
		t.Fatal(err)
	}

	wrong := filepath.Join(t.TempDir(), "config.json")
	bad := base64.StdEncoding.EncodeToString([]byte("robot:wrong-" + password))
	if err := os.WriteFile(wrong, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, bad), 0o600); err != nil {
		t.Fatal(err)
	}
	l2 := newLoader(t, host)
	l2.RegistryConfig = wrong
	_, err = l2.Resolve(ctx, host+"/private:v1")
	if err == nil {
		t.Fatal("wrong password accepted")
	}
	if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), bad) {
		t.Errorf("error leaks the credentials: %v", err)
	}
	l3 := newLoader(t, host)
	l3.RegistryConfig = filepath.Join(t.TempDir(), "missing.json")
	if _, err := l3.Resolve(ctx, host+"/private:v1"); err == nil || !strings.Contains(err.Error(), "registry config") {
		t.Errorf("missing registry config: %v", err)
	}
}

// TestImageLoaderResolvesImagesOnly: a reference that names an existing
// directory is still an image reference to the loader (which references are
// directories is the spec's rule, applied before a loader is asked), while
// Load reads the directory of an origin that has one.
func TestImageLoaderResolvesImagesOnly(t *testing.T) {
	var hosts []string
	var mu sync.Mutex
	l := &ImageLoader{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		hosts = append(hosts, r.URL.Host)
		mu.Unlock()
		return nil, errors.New("offline")
	})}
	if o, err := l.Resolve(context.Background(), "testdata/good"); err == nil || o.Dir != "" {
		t.Errorf("Resolve(an existing directory) = %+v, %v; want a registry error", o, err)
	}
	if len(hosts) == 0 || hosts[0] != "index.docker.io" {
		t.Errorf("asked %v, want the registry of docker.io/testdata/good", hosts)
	}

	abs, _ := filepath.Abs("testdata/good")
	b, err := l.Load(context.Background(), Origin{Ref: "./testdata/good", Dir: abs})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := LoadDir("testdata/good")
	sameBundle(t, b, want)
	if digest, _ := DirDigest(abs); b.Origin.Digest != want.Origin.Digest || b.Origin.Digest != digest || b.Origin.Ref != "./testdata/good" {
		t.Errorf("Origin = %+v, want digest %s (DirDigest %s)", b.Origin, want.Origin.Digest, digest)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAllowedRegistries: the loader's allow-list reaches every pull, bundles,
// pinned images and catalogs alike, before any request.
func TestAllowedRegistries(t *testing.T) {
	host, reqs := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "widget", "v1", "testdata/good")
	ctx := context.Background()
	o, err := newLoader(t, host).Resolve(ctx, host+"/widget:v1")
	if err != nil {
		t.Fatal(err)
	}
	closed := newLoader(t, host)
	closed.AllowedRegistries = []string{"quay.io", "docker.io"}
	reqs.Reset()
	_, rerr := closed.Resolve(ctx, host+"/widget:v1")
	_, lerr := closed.Load(ctx, o)
	_, _, cerr := closed.LoadCatalog(ctx, host+"/catalog:latest")
	for _, err := range []error{rerr, lerr, cerr} {
		if !errors.Is(err, registry.ErrNotAllowed) || !strings.Contains(err.Error(), host+" is not one of quay.io, docker.io (--allowed-registries)") {
			t.Errorf("not refused: %v", err)
		}
	}
	if n := reqs.Total(); n != 0 {
		t.Errorf("%d requests to a registry that is not allowed", n)
	}
}
