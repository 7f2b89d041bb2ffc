package bundle_test

// Fuzz target for manifest splitting: any bytes as a file of a bundle's
// manifests/ directory, which is what a repository (a directory bundle) or a
// registry (an image layer) hands the loader. Seeds: testdata/fuzz.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// loadDeadline is far above any honest load of a file the fuzzer builds
// (milliseconds); an input that takes longer is unbounded work, a finding.
const loadDeadline = 30 * time.Second

const goodBundle = "testdata/good"

// FuzzLoadFS: data is manifests/fuzz.yaml of a bundle with valid metadata;
// with withCSV the bundle also holds a valid CSV in another file, so the
// fuzzer reaches classification and CSV decoding with or without its own
// CSV. LoadFS must not panic, must return within loadDeadline, and must
// either load a bundle with a CSV and a digest, the same on a second load, or
// give an error naming the manifests.
func FuzzLoadFS(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join(goodBundle, "manifests"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(goodBundle, "manifests", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, !strings.Contains(e.Name(), "clusterserviceversion"))
	}
	annotations, err := os.ReadFile(filepath.Join(goodBundle, "metadata", "annotations.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(goodBundle, "manifests", "widget-operator.clusterserviceversion.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, withCSV bool) {
		fsys := fstest.MapFS{
			"metadata/annotations.yaml": {Data: annotations},
			"manifests/fuzz.yaml":       {Data: data},
		}
		if withCSV {
			fsys["manifests/csv.yaml"] = &fstest.MapFile{Data: csv}
		}
		b, err := loadWithin(t, fsys)
		if err != nil {
			msg := err.Error()
			if strings.TrimSpace(msg) == "" {
				t.Fatal("empty error message")
			}
			for _, bad := range []string{"panic", "runtime error", "goroutine "} {
				if strings.Contains(msg, bad) && !strings.Contains(string(data), bad) {
					t.Fatalf("error message holds %q: %q", bad, msg)
				}
			}
			if !strings.Contains(msg, "manifests/") {
				t.Fatalf("error names no manifest file: %q", msg)
			}
			return
		}
		if b.CSV == nil || b.Origin.Digest == "" || b.Package == "" {
			t.Fatalf("loaded a bundle without CSV, digest or package: %+v", b.Origin)
		}
		again, err := loadWithin(t, fsys)
		if err != nil {
			t.Fatalf("second load of the same files failed: %v", err)
		}
		if again.Origin.Digest != b.Origin.Digest || len(again.CRDs) != len(b.CRDs) || len(again.Others) != len(b.Others) {
			t.Fatalf("two loads of the same files differ: %s/%d/%d vs %s/%d/%d",
				b.Origin.Digest, len(b.CRDs), len(b.Others), again.Origin.Digest, len(again.CRDs), len(again.Others))
		}
		for _, o := range append(b.CRDs, b.Others...) {
			if _, err := o.String(); err != nil {
				t.Fatalf("%s: loaded object does not serialize: %v", o.File, err)
			}
		}
	})
}

// loadWithin runs LoadFS and fails the input if it outlives loadDeadline
// (the load goroutine is left behind: the fuzz worker is about to report).
func loadWithin(t *testing.T, fsys fstest.MapFS) (*bundle.Bundle, error) {
	t.Helper()
	type result struct {
		b   *bundle.Bundle
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := bundle.LoadFS(fsys, bundle.Origin{Ref: "fuzz"})
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-time.After(loadDeadline):
		t.Fatalf("LoadFS still running after %s", loadDeadline)
		return nil, nil
	}
}
