package checkproc

import (
	"container/list"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/safefile"
)

// Key names a pure job's output: the SHA-256 of what it depends on.
type Key [sha256.Size]byte

// KeyOf is the key of a job that depends on its operation and input only.
func KeyOf(op string, input []byte) Key {
	h := sha256.New()
	h.Write([]byte(op))
	h.Write([]byte{0})
	h.Write(input)
	var k Key
	h.Sum(k[:0])
	return k
}

// Bounds of a Store. An output kept is a verdict (a few problem lines);
// real bundles have tens of CRDs and a few custom resources and webhooks.
const (
	// MaxStoredBytes bounds one output kept, in memory or on disk: a
	// larger one is used once and not kept.
	MaxStoredBytes = 64 << 10
	// maxMemoryEntries and maxMemoryBytes bound the outputs a Store keeps
	// in memory (least recently used first out).
	maxMemoryEntries = 4096
	maxMemoryBytes   = 16 << 20
	// maxFiles bounds the files one build keeps on disk (each one
	// file-system block), so a stream of new inputs (a tenant rendering
	// generated bundles through the sidecar) cannot fill the cache volume:
	// past it, outputs stay in memory only.
	maxFiles = 10000
	// keptBuilds is how many builds' directories a cache keeps: a machine
	// running two olm-cmp versions in turn (an upgrade under way, CI jobs
	// pinned to different releases) keeps both, not each clearing the
	// other's.
	keptBuilds = 4
)

// Store keeps the outputs of pure jobs by Key: in memory for the process
// (a sidecar), and on disk under a cache directory for the processes that
// follow (a process per request: Argo CD's classic plugin mode, CI's
// `diff`), so a render that meets nothing new never starts olm-cmp-check.
//
// An output is a pure function of its key and of the code that computed
// it: files live under a directory named after the build of olm-cmp and
// olm-cmp-check (Build), so another build never reads an output it did not
// write, and a new build clears the directories of all but the few builds
// written last when it makes its own. A file is written whole or not at all
// (a temporary file renamed into place); one that cannot be written only
// costs the next process the job, so write failures are not reported.
//
// The Store checks bounds only: its caller decodes an output strictly and
// treats one it does not accept as missing.
type Store struct {
	name string // the cache directory's subdirectory

	mu    sync.Mutex
	lru   *list.List // of *entry, most recent first
	byKey map[Key]*list.Element
	bytes int

	dir   atomic.Pointer[string] // this build's directory, nil: memory only
	files fileCount
}

// fileCount is what a Store knows of the number of files in its
// directory, which other processes (Argo CD's classic plugin mode runs a
// process per request) write too: the count at its last reading plus its
// own writes since. It reads the directory again after writing an eighth
// of the room it saw (so up to 8 processes writing at once stay within
// maxFiles), and when its count reaches maxFiles.
type fileCount struct {
	mu      sync.Mutex
	counted bool
	full    bool // the last reading found maxFiles: not read again
	n       int
	since   int
}

type entry struct {
	key Key
	out []byte
}

// NewStore is a Store whose files live under <cache-dir>/name/<build>/.
func NewStore(name string) *Store {
	return &Store{name: name, lru: list.New(), byKey: map[Key]*list.Element{}}
}

// Keep makes outputs persist under cacheDir (created when one is first
// written); "" keeps them in memory only. Safe for concurrent use; the last
// call wins.
func (s *Store) Keep(cacheDir string) {
	if cacheDir == "" {
		s.dir.Store(nil)
		return
	}
	d := filepath.Join(cacheDir, s.name, Build())
	s.dir.Store(&d)
}

// Dir is this build's directory, "" when outputs are kept in memory only.
func (s *Store) Dir() string {
	if d := s.dir.Load(); d != nil {
		return *d
	}
	return ""
}

// Build names this build: olm-cmp's module versions and VCS stamp, and the
// path, size, modification time, inode and change time of its executable
// and of the olm-cmp-check it runs (a dirty tree rebuilt keeps its
// revision, not its executables' times; the two are installed together but
// may not be replaced together, and a replaced file keeps neither its
// inode nor its change time, even when its size and modification time
// are kept).
var Build = sync.OnceValue(func() string {
	var helper string
	if p, err := locate(); err == nil {
		helper = p
	}
	exe, _ := os.Executable()
	return buildName(exe, helper)
})

// buildName is Build for the executables exe and helper ("": none).
func buildName(exe, helper string) string {
	h := sha256.New()
	if bi, ok := debug.ReadBuildInfo(); ok {
		h.Write([]byte(bi.String()))
	}
	for _, p := range []string{exe, helper} {
		if fi, err := os.Stat(p); p != "" && err == nil {
			ino, ctime := fileChange(fi)
			fmt.Fprintf(h, "\x00%s\x00%d\x00%d\x00%d\x00%d", p, fi.Size(), fi.ModTime().UnixNano(), ino, ctime)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// HelperBuildInfo is the build information of the olm-cmp-check Run would
// start, read from its executable (which is not run): `olm-cmp version`
// gives the versions of the modules only the helper links from it.
func HelperBuildInfo() (*debug.BuildInfo, error) {
	path, err := locate()
	if err != nil {
		return nil, err
	}
	return buildinfo.ReadFile(path)
}

// Get returns key's output: from memory, else from this build's directory
// (then kept in memory too).
func (s *Store) Get(key Key) ([]byte, bool) {
	s.mu.Lock()
	if el, ok := s.byKey[key]; ok {
		s.lru.MoveToFront(el)
		out := el.Value.(*entry).out
		s.mu.Unlock()
		return out, true
	}
	s.mu.Unlock()
	dir := s.dir.Load()
	if dir == nil {
		return nil, false
	}
	out, err := safefile.Read(filepath.Join(*dir, hex.EncodeToString(key[:])), MaxStoredBytes, false)
	if err != nil {
		return nil, false
	}
	s.remember(key, out)
	return out, true
}

// Forget drops key's output from memory and disk: its caller did not accept
// it (a file another process damaged).
func (s *Store) Forget(key Key) {
	s.mu.Lock()
	if el, ok := s.byKey[key]; ok {
		s.drop(el)
	}
	s.mu.Unlock()
	if dir := s.dir.Load(); dir != nil {
		os.Remove(filepath.Join(*dir, hex.EncodeToString(key[:])))
	}
}

// Put keeps key's output, in memory and, when a directory is kept, on disk.
func (s *Store) Put(key Key, out []byte) {
	if len(out) > MaxStoredBytes {
		return
	}
	s.remember(key, out)
	if dir := s.dir.Load(); dir != nil {
		s.write(*dir, key, out)
	}
}

func (s *Store) remember(key Key, out []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		s.drop(el)
	}
	s.byKey[key] = s.lru.PushFront(&entry{key, out})
	s.bytes += len(out)
	for s.lru.Len() > maxMemoryEntries || s.bytes > maxMemoryBytes {
		s.drop(s.lru.Back())
	}
}

func (s *Store) drop(el *list.Element) {
	e := s.lru.Remove(el).(*entry)
	delete(s.byKey, e.key)
	s.bytes -= len(e.out)
}

func (s *Store) write(dir string, key Key, out []byte) {
	if _, err := os.Stat(dir); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return
		}
		clearOtherBuilds(dir)
	}
	if !s.files.room(dir) {
		return
	}
	f, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return
	}
	_, werr := f.Write(out)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, hex.EncodeToString(key[:]))); err != nil {
		os.Remove(f.Name())
		return
	}
}

// room says whether dir may take one more file, reading it when due, and
// counts that file (a rewrite, or a write that fails, counts too: the bound
// errs on the safe side).
func (c *fileCount) room(dir string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.counted || (!c.full && (c.n >= maxFiles || c.since >= max(1, (maxFiles-c.n)/8))) {
		c.n, c.since, c.counted = countFiles(dir), 0, true
		c.full = c.n >= maxFiles
	}
	if c.n >= maxFiles {
		return false
	}
	c.n++
	c.since++
	return true
}

// staleTemp is the age past which a temporary file is one a killed writer
// left (a write takes microseconds).
const staleTemp = time.Minute

// countFiles is the number of files in dir (at most maxFiles), once the
// temporary files writers killed mid-write left there are removed.
func countFiles(dir string) int {
	f, err := os.Open(dir)
	if err != nil {
		return maxFiles // unreadable: write nothing more
	}
	names, _ := f.Readdirnames(maxFiles + 1024)
	f.Close()
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, ".tmp-") {
			p := filepath.Join(dir, name)
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTemp {
				if os.Remove(p) == nil {
					continue
				}
			}
		}
		n++
	}
	return min(n, maxFiles)
}

// clearOtherBuilds removes the directories of the builds beside dir (named
// as Build names them, nothing else) beyond the keptBuilds-1 most recently
// written: an old build's outputs are never read by this one, and each
// build would otherwise leave its own.
func clearOtherBuilds(dir string) {
	parent, self := filepath.Split(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	type build struct {
		name string
		mod  time.Time
	}
	var others []build
	for _, e := range entries {
		if name := e.Name(); e.IsDir() && name != self && isBuildName(name) {
			if fi, err := e.Info(); err == nil {
				others = append(others, build{name, fi.ModTime()})
			}
		}
	}
	slices.SortFunc(others, func(a, b build) int { return b.mod.Compare(a.mod) })
	for _, o := range others[min(len(others), keptBuilds-1):] {
		os.RemoveAll(filepath.Join(parent, o.name))
	}
}

func isBuildName(s string) bool {
	return len(s) == 32 && strings.Trim(s, "0123456789abcdef") == ""
}
