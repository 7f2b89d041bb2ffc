package validate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// The API server's CRD validation compiles every x-kubernetes-validations
// rule as CEL: for sail-operator's bundle that is about 0.4 CPU-seconds, two
// thirds of a one-shot `olm-cmp render`. The in-process cache (crdVerdicts)
// serves a sidecar; a process per request (Argo CD's classic plugin mode
// runs `olm-cmp generate` for every request, CI runs `diff` for every
// pull request) starts with it empty. So verdicts are also kept on disk,
// beside the bundles the same commands pull, and read back by the next
// process.
//
// A verdict is a pure function of the CRD's crdKey and of the code that
// judged it: files live under a directory named after this build
// (verdictBuild), so another olm-cmp (or the same source rebuilt) never
// reads a verdict it did not write, and a new build clears the directories
// of all but the few builds written last when it makes its own.

// verdictDirName is the subdirectory of a cache directory verdicts live in.
const verdictDirName = "crd-verdicts"

// Bounds on a verdict read back: a few problem lines (each as the render
// prints it), never more than the check itself writes.
const (
	maxVerdictFileBytes = 64 << 10
	maxVerdictLines     = 64
)

// verdictDir is the directory of this build's verdicts ("" keeps none).
var verdictDir atomic.Pointer[string]

// KeepVerdicts makes CRD verdicts persist under cacheDir (created when a
// verdict is first written), so later processes sharing the directory skip
// the checks this one made. "" keeps them in memory only. Safe for
// concurrent use; the last call wins.
func KeepVerdicts(cacheDir string) {
	if cacheDir == "" {
		verdictDir.Store(nil)
		return
	}
	d := filepath.Join(cacheDir, verdictDirName, verdictBuild())
	verdictDir.Store(&d)
}

// verdictBuild names this build: its module versions and VCS stamp, and the
// size and modification time of its executable (a dirty tree rebuilt keeps
// its revision, not its executable's time).
var verdictBuild = sync.OnceValue(func() string {
	h := sha256.New()
	if bi, ok := debug.ReadBuildInfo(); ok {
		h.Write([]byte(bi.String()))
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "\x00%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
})

// loadVerdict reads key's verdict from disk: ok false when there is none
// (no directory kept, no file, or one that is not a verdict this build
// wrote in the form it writes).
func loadVerdict(key [sha256.Size]byte) (problems []string, ok bool) {
	dir := verdictDir.Load()
	if dir == nil {
		return nil, false
	}
	data, err := safefile.Read(filepath.Join(*dir, hex.EncodeToString(key[:])), maxVerdictFileBytes, false)
	if err != nil {
		return nil, false
	}
	var v verdictFile
	if err := json.Unmarshal(data, &v); err != nil || len(v.Problems) > maxVerdictLines {
		return nil, false
	}
	// only the exact bytes storeVerdict writes count: json.Unmarshal would
	// also take null, {}, {"PROBLEMS":[]} or extra keys as "no problems"
	if again, err := json.Marshal(v); err != nil || string(again) != string(data) {
		return nil, false
	}
	return v.Problems, true
}

// verdictFile is a verdict's form on disk.
type verdictFile struct {
	Problems []string `json:"problems"`
}

// verdictFiles counts this build's verdict files (read from the directory
// once, on the first store), so a stream of new CRD contents (a tenant
// rendering generated bundles through the sidecar) cannot fill the cache
// volume: past maxVerdictFiles, verdicts stay in memory only.
var verdictFiles struct {
	once sync.Once
	n    atomic.Int64
}

// maxVerdictFiles bounds the verdict files one build keeps on disk (each
// one file-system block; real bundles have tens of distinct CRDs).
const maxVerdictFiles = 10000

// storeVerdict writes key's verdict for later processes: whole or not at
// all (a temporary file renamed into place). A cache that cannot be written
// only costs the next process the check, so failures are not reported.
func storeVerdict(key [sha256.Size]byte, problems []string) {
	dir := verdictDir.Load()
	if dir == nil || len(problems) > maxVerdictLines {
		return
	}
	data, err := json.Marshal(verdictFile{problems})
	if err != nil || len(data) > maxVerdictFileBytes {
		return
	}
	if _, err := os.Stat(*dir); err != nil {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return
		}
		clearOtherBuilds(*dir)
	}
	verdictFiles.once.Do(func() {
		if f, err := os.Open(*dir); err == nil {
			names, _ := f.Readdirnames(maxVerdictFiles)
			f.Close()
			verdictFiles.n.Store(int64(len(names)))
		}
	})
	if verdictFiles.n.Load() >= maxVerdictFiles {
		return
	}
	f, err := os.CreateTemp(*dir, ".tmp-")
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return
	}
	if err := os.Rename(f.Name(), filepath.Join(*dir, hex.EncodeToString(key[:]))); err != nil {
		os.Remove(f.Name())
		return
	}
	verdictFiles.n.Add(1) // a rewrite counts again: the bound errs on the safe side
}

// keptBuilds is how many builds' verdict directories a cache keeps: a
// machine running two olm-cmp versions in turn (an upgrade under way, CI
// jobs pinned to different releases) keeps both, not each clearing the
// other's.
const keptBuilds = 4

// clearOtherBuilds removes the verdict directories of the builds beside dir
// (named as verdictBuild names them, nothing else) beyond the keptBuilds-1
// most recently written: an old build's verdicts are never read by this
// one, and each build would otherwise leave its own.
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
