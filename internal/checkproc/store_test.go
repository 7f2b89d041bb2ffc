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
	s.files.once.Do(func() {})
	s.files.n.Store(maxFiles - 1)
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
