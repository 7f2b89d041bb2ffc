package checkproc

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An output kept on disk is read by the next process (a new Store on the
// same directory); one forgotten is gone from both.
func TestStoreKeepsOutputsOnDisk(t *testing.T) {
	cache := t.TempDir()
	s := NewStore("verdicts")
	s.Keep(cache)
	k := KeyOf("op", []byte("input"))
	s.Put(k, []byte(`{"problems":null}`))
	file := filepath.Join(cache, "verdicts", Build(), hex.EncodeToString(k[:]))
	if data, err := os.ReadFile(file); err != nil || string(data) != `{"problems":null}` {
		t.Fatalf("on disk: %q %v", data, err)
	}
	next := NewStore("verdicts")
	if _, ok := next.Get(k); ok {
		t.Error("read without a directory kept")
	}
	next.Keep(cache)
	if out, ok := next.Get(k); !ok || string(out) != `{"problems":null}` {
		t.Errorf("the next process read %q %v", out, ok)
	}
	next.Forget(k)
	if _, ok := next.Get(k); ok {
		t.Error("forgotten but read")
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("forgotten but on disk")
	}
	if KeyOf("op", []byte("input")) == KeyOf("op2", []byte("input")) || KeyOf("o", []byte("pinput")) == k {
		t.Error("the key does not tell operations apart")
	}
}

// An output over MaxStoredBytes is kept nowhere; memory keeps at most
// maxMemoryEntries and maxMemoryBytes, the least recently used out first.
func TestStoreBounds(t *testing.T) {
	s := NewStore("verdicts")
	big := KeyOf("op", []byte("big"))
	s.Put(big, make([]byte, MaxStoredBytes+1))
	if _, ok := s.Get(big); ok {
		t.Error("an output over the bound was kept")
	}
	first := KeyOf("op", []byte("0"))
	for i := range maxMemoryEntries + 1 {
		s.Put(KeyOf("op", []byte(strconv.Itoa(i))), []byte("x"))
	}
	if _, ok := s.Get(first); ok || s.lru.Len() != maxMemoryEntries {
		t.Errorf("%d entries, the oldest kept %v", s.lru.Len(), ok)
	}
	s = NewStore("verdicts")
	for i := range maxMemoryBytes/MaxStoredBytes + 1 {
		s.Put(KeyOf("op", []byte(strconv.Itoa(i))), make([]byte, MaxStoredBytes))
	}
	if s.bytes > maxMemoryBytes {
		t.Errorf("%d bytes in memory", s.bytes)
	}
}

// A build's first output clears the directories of all but the builds
// written last, never anything else in the directory.
func TestStoreClearsOldBuilds(t *testing.T) {
	cache := t.TempDir()
	root := filepath.Join(cache, "verdicts")
	var builds []string
	now := time.Now()
	for i := range keptBuilds + 1 {
		d := filepath.Join(root, strings.Repeat(strconv.Itoa(i), 32))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		// builds[0] written last, builds[keptBuilds] first.
		if err := os.Chtimes(d, now, now.Add(-time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		builds = append(builds, d)
	}
	other := filepath.Join(root, "not-a-build")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	s := NewStore("verdicts")
	s.Keep(cache)
	s.Put(Key{1}, []byte("{}"))
	for i, d := range builds {
		_, err := os.Stat(d)
		if kept := i < keptBuilds-1; kept != (err == nil) {
			t.Errorf("build written %d hours ago: kept %v, want %v", i, err == nil, kept)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a directory that is not a build's was removed: %v", err)
	}
}

// Past maxFiles files in this build's directory, outputs stay in memory:
// a stream of new inputs cannot fill the cache volume.
func TestStoreFilesBounded(t *testing.T) {
	cache := t.TempDir()
	s := NewStore("verdicts")
	s.Keep(cache)
	fill(t, s.Dir(), maxFiles-1)
	a, b := Key{1}, Key{2}
	s.Put(a, []byte("one"))
	s.Put(b, []byte("two"))
	for k, want := range map[Key]bool{a: true, b: false} {
		_, err := os.Stat(filepath.Join(s.Dir(), hex.EncodeToString(k[:])))
		if (err == nil) != want {
			t.Errorf("file %x written %v, want %v", k[:1], err == nil, want)
		}
	}
	if _, ok := s.Get(b); !ok {
		t.Error("the output past the bound is not kept in memory")
	}
}

// The bound holds for the directory, not per process: processes writing
// at once (Argo CD's classic plugin mode) read it again before their
// counts could add up past it.
func TestStoreFilesBoundedAcrossProcesses(t *testing.T) {
	cache := t.TempDir()
	first, second := newStoreOn(t, cache), newStoreOn(t, cache)
	fill(t, first.Dir(), maxFiles-2)
	first.Put(Key{1}, []byte("1"))  // counts maxFiles-2, writes
	second.Put(Key{2}, []byte("2")) // counts maxFiles-1, writes
	first.Put(Key{3}, []byte("3"))  // must see the second's file
	if n := len(names(t, first.Dir())); n > maxFiles {
		t.Errorf("%d files, over the bound of %d", n, maxFiles)
	}
}

// A temporary file a killed writer left is removed once it is a minute
// old; one being written is not.
func TestStoreSweepsStaleTemporaryFiles(t *testing.T) {
	s := newStoreOn(t, t.TempDir())
	fill(t, s.Dir(), 0)
	old, fresh := filepath.Join(s.Dir(), ".tmp-1"), filepath.Join(s.Dir(), ".tmp-2")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	s.Put(Key{1}, []byte("{}"))
	if _, err := os.Stat(old); err == nil {
		t.Error("a stale temporary file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temporary file being written was removed: %v", err)
	}
}

// fill makes dir with n files in it.
func fill(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// Replacing olm-cmp-check (a new install, a copy) changes the build's name
// even when the new file keeps the old one's size and modification time
// (hack/ociimage sets every time to SOURCE_DATE_EPOCH): another helper
// build never reads these verdicts.
func TestBuildChangesWhenTheHelperIsReplaced(t *testing.T) {
	dir := t.TempDir()
	helper := filepath.Join(dir, Executable)
	epoch := time.Unix(1700000000, 0)
	write := func(p, body string) {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, epoch, epoch); err != nil {
			t.Fatal(err)
		}
	}
	write(helper, "build A")
	before := buildName("", helper)
	if again := buildName("", helper); again != before {
		t.Fatalf("the name changed without a change: %s, %s", before, again)
	}
	next := filepath.Join(dir, "next")
	write(next, "build B") // same size, same time
	if err := os.Rename(next, helper); err != nil {
		t.Fatal(err)
	}
	if after := buildName("", helper); after == before {
		t.Error("a replaced olm-cmp-check of the same size and time keeps the build's name")
	}
}

// A file over MaxStoredBytes, or not a regular file, is not read.
func TestStoreRefusesWhatItDidNotWrite(t *testing.T) {
	cache := t.TempDir()
	s := NewStore("verdicts")
	s.Keep(cache)
	s.Put(Key{9}, []byte("{}")) // makes the directory
	for i, plant := range []func(p string) error{
		func(p string) error { return os.WriteFile(p, make([]byte, MaxStoredBytes+1), 0o644) },
		func(p string) error { return os.Mkdir(p, 0o755) },
		func(p string) error { return os.Symlink("/etc/passwd", p) },
	} {
		k := Key{byte(i + 1)}
		if err := plant(filepath.Join(s.Dir(), hex.EncodeToString(k[:]))); err != nil {
			t.Fatal(err)
		}
		if out, ok := newStoreOn(t, cache).Get(k); ok {
			t.Errorf("case %d read %.20q", i, out)
		}
	}
}

// newStoreOn is a new process's Store on cache.
func newStoreOn(t *testing.T, cache string) *Store {
	t.Helper()
	s := NewStore("verdicts")
	s.Keep(cache)
	return s
}
