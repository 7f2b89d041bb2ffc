package bundle

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// filesOf lists the regular files of fsys, sorted.
func filesOf(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

var catalogFiles = []string{".indexignore", "ignored.yaml", "sub/gadget.json", "widget.yaml"}

func TestLoadCatalogImage(t *testing.T) {
	host, reqs := bundletest.NewRegistry(t)
	// Files outside the configs directory (the opm base image) are not kept.
	img := bundletest.CatalogImage(t, "testdata/catalog/configs", "/configs",
		bundletest.File("bin/opm", "binary"), bundletest.File("manifests/x.yaml", "kind: X"))
	digest := bundletest.Push(t, host, "catalogs/test", "latest", img)
	l := newLoader(t, host)
	ctx := context.Background()

	fsys, o, err := l.LoadCatalog(ctx, host+"/catalogs/test:latest")
	if err != nil {
		t.Fatal(err)
	}
	if o.Digest != digest || o.Image != host+"/catalogs/test@"+digest || o.Ref != host+"/catalogs/test:latest" {
		t.Errorf("origin = %+v, want digest %s", o, digest)
	}
	// Cached under catalogs/, apart from bundles, with only the catalog in it.
	if want := filepath.Join(l.CacheDir, "catalogs", "sha256", strings.TrimPrefix(digest, "sha256:")); o.Dir != want {
		t.Errorf("cache dir = %s, want %s", o.Dir, want)
	}
	if got := filesOf(t, os.DirFS(o.Dir)); !slices.Equal(got, catalogFiles) {
		t.Errorf("cached files = %v, want %v", got, catalogFiles)
	}
	sameFile(t, fsys, "widget.yaml")

	// Again: the tag is resolved (it may have moved), nothing is downloaded.
	reqs.Reset()
	if _, _, err := l.LoadCatalog(ctx, host+"/catalogs/test:latest"); err != nil {
		t.Fatal(err)
	}
	if reqs.Manifests() != 1 || reqs.BlobGets() != 0 {
		t.Errorf("second load: %v, want one manifest request and no blob", reqs.Requests())
	}

	// The tag moves: the new content is loaded.
	moved := bundletest.CatalogImage(t, "testdata/catalog/configs/sub", "/configs")
	digest2 := bundletest.Push(t, host, "catalogs/test", "latest", moved)
	fsys, o, err = l.LoadCatalog(ctx, host+"/catalogs/test:latest")
	if err != nil {
		t.Fatal(err)
	}
	if o.Digest != digest2 || !slices.Equal(filesOf(t, fsys), []string{"gadget.json"}) {
		t.Errorf("after the tag moved: %+v %v", o, filesOf(t, fsys))
	}
}

func TestLoadCatalogImageLabel(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		dir  string // configs directory in the image; "" for no label
		want string // error, or "" for success
	}{
		"nested label":  {dir: "/var/lib/fbc"},
		"trailing /":    {dir: "configs/"},
		"no label":      {},
		"label is root": {dir: "/", want: "does not name a directory"},
		"label leaves":  {dir: "/../etc", want: "does not name a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			img := bundletest.CatalogImage(t, "testdata/catalog/configs", tc.dir)
			if tc.dir == "" {
				// No label: /configs is the default.
				img = bundletest.Image(t, bundletest.Layer(t, bundletest.TreeEntries(t, "testdata/catalog/configs", "configs/")...))
			}
			bundletest.Push(t, host, "catalogs/label", "v1", img)
			l := newLoader(t, host)
			fsys, _, err := l.LoadCatalog(ctx, host+"/catalogs/label:v1")
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v, want it to mention %q", err, tc.want)
				}
				if e := cacheEntries(t, filepath.Join(l.CacheDir, "catalogs")); len(e) != 0 {
					t.Errorf("cache holds %v after a failed load", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := filesOf(t, fsys); !slices.Equal(got, catalogFiles) {
				t.Errorf("files = %v, want %v", got, catalogFiles)
			}
		})
	}
}

// TestLoadCatalogImageHostile checks that catalog extraction is the bundle
// extraction: links and escaping names are refused, and nothing is cached.
func TestLoadCatalogImageHostile(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	for name, tc := range map[string]struct {
		entry bundletest.Entry
		want  string
	}{
		"symlink in configs": {bundletest.Symlink("configs/passwd.yaml", "/etc/passwd"), "is a link"},
		"configs is a link":  {bundletest.Symlink("configs", "/etc"), "is a link"},
		"dot-dot":            {bundletest.File("configs/../../x.yaml", "x"), "`..`"},
		"configs is a file":  {bundletest.File("configs", "x"), "needs a directory"},
		"no configs":         {bundletest.File("elsewhere/catalog.yaml", "x"), "no files in /configs/"},
	} {
		t.Run(name, func(t *testing.T) {
			img := bundletest.Image(t, bundletest.Layer(t, tc.entry))
			bundletest.Push(t, host, "catalogs/hostile", "v1", img)
			work := t.TempDir()
			l := &ImageLoader{CacheDir: filepath.Join(work, "cache"), Insecure: []string{host}}
			_, _, err := l.LoadCatalog(context.Background(), host+"/catalogs/hostile:v1")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to mention %q", err, tc.want)
			}
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
		})
	}
}

// TestCatalogAndBundleCacheApart loads one image (holding a bundle and a
// catalog) both ways: the two cache entries must not collide.
func TestCatalogAndBundleCacheApart(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	entries := append(bundletest.DirEntries(t, "testdata/good"), bundletest.TreeEntries(t, "testdata/catalog/configs", "configs/")...)
	bundletest.Push(t, host, "both", "v1", bundletest.Image(t, bundletest.Layer(t, entries...)))
	ctx := context.Background()
	for _, order := range []string{"bundle first", "catalog first"} {
		t.Run(order, func(t *testing.T) {
			l := newLoader(t, host)
			loadBundle := func() {
				o, err := l.Resolve(ctx, host+"/both:v1")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := l.Load(ctx, o); err != nil {
					t.Fatalf("bundle: %v", err)
				}
			}
			loadCatalog := func() {
				fsys, _, err := l.LoadCatalog(ctx, host+"/both:v1")
				if err != nil {
					t.Fatalf("catalog: %v", err)
				}
				if got := filesOf(t, fsys); !slices.Equal(got, catalogFiles) {
					t.Errorf("catalog files = %v", got)
				}
			}
			if order == "bundle first" {
				loadBundle()
				loadCatalog()
			} else {
				loadCatalog()
				loadBundle()
			}
			loadBundle()
			loadCatalog()
		})
	}
}

func TestLoadCatalogWithoutCacheDir(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.Push(t, host, "catalogs/test", "v1", bundletest.CatalogImage(t, "testdata/catalog/configs", "/configs"))
	l := &ImageLoader{Insecure: []string{host}}
	fsys, o, err := l.LoadCatalog(context.Background(), host+"/catalogs/test:v1")
	if err != nil {
		t.Fatal(err)
	}
	if o.Dir != "" {
		t.Errorf("origin dir %q: nothing should be kept on disk", o.Dir)
	}
	if got := filesOf(t, fsys); !slices.Equal(got, catalogFiles) {
		t.Errorf("files = %v, want %v", got, catalogFiles)
	}
	sameFile(t, fsys, "sub/gadget.json")
}

// sameFile checks that the catalog file name of fsys holds what the fixture does.
func sameFile(t *testing.T, fsys fs.FS, name string) {
	t.Helper()
	got, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata/catalog/configs", name))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the fixture", name)
	}
}
