package checkproc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// buildID is what an executable knows of its own build (debug.ReadBuildInfo,
// a parse of a string the linker embeds: microseconds): olm-cmp sends it
// with each request and olm-cmp-check answers its own first, so a stale
// olm-cmp-check (an older `make install` on PATH, an image whose helper
// was copied from another build) is refused in one line before any check
// it made counts. It protects against mistakes, not against an attacker:
// whoever can replace olm-cmp-check runs their own code as the sidecar and
// can answer anything.
type buildID struct {
	Go       string            `json:"go"`
	Module   string            `json:"module"`             // main module path and version
	Settings map[string]string `json:"settings,omitempty"` // identitySettings only
	Deps     map[string]string `json:"deps,omitempty"`     // module path: version, sum, replacement
}

// identitySettings are the build settings both executables of one build
// share: the target, the flags (-ldflags is recorded only without
// -trimpath, so the version main was stamped with is added: StampVersion)
// and the VCS stamp. The others (-buildmode, DefaultGODEBUG…) may differ
// between two main packages of one build.
var identitySettings = []string{"GOOS", "GOARCH", "CGO_ENABLED", "-ldflags", "-tags", "-trimpath", "main.version", "vcs.revision", "vcs.time", "vcs.modified"}

// stamped is the version main was stamped with (-X main.version=…), which
// the build info does not hold when built with -trimpath (every build of
// both but `go build` and `go install` without flags): make build, the
// Dockerfile, hack/ociimage and the release stamp both executables alike.
var stamped atomic.Pointer[string]

// StampVersion records the version main was stamped with, for the build
// check; main calls it first thing, before any helper runs.
func StampVersion(v string) { stamped.Store(&v) }

// self is this executable's build.
var self = sync.OnceValue(readBuild)

func readBuild() *buildID {
	id := &buildID{Settings: map[string]string{}, Deps: map[string]string{}}
	if v := stamped.Load(); v != nil {
		id.Settings["main.version"] = *v
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return id
	}
	id.Go, id.Module = bi.GoVersion, bi.Main.Path+" "+bi.Main.Version
	for _, s := range bi.Settings {
		for _, k := range identitySettings {
			if s.Key == k {
				id.Settings[k] = s.Value
			}
		}
	}
	for _, d := range bi.Deps {
		v := d.Version + " " + d.Sum
		if d.Replace != nil {
			v += " => " + d.Replace.Path + " " + d.Replace.Version + " " + d.Replace.Sum
		}
		id.Deps[d.Path] = v
	}
	return id
}

// differs says how two executables' builds differ ("" when they may be
// one build). The two main packages link different modules, so only the
// modules both link are compared. A test binary has no VCS stamp and no
// version of its own ("(devel)"), and an executable built with
// -buildvcs=false (the Dockerfile) neither: those are compared when both
// have them.
func (a *buildID) differs(b *buildID) string {
	if a.Go != b.Go {
		return fmt.Sprintf("Go %s, %s Go %s", a.Go, Executable, b.Go)
	}
	av, bv := a.Module, b.Module
	if !strings.HasSuffix(av, " (devel)") && !strings.HasSuffix(bv, " (devel)") && av != bv {
		return fmt.Sprintf("%s, %s %s", av, Executable, bv)
	}
	_, avcs := a.Settings["vcs.revision"]
	_, bvcs := b.Settings["vcs.revision"]
	for _, k := range identitySettings {
		if strings.HasPrefix(k, "vcs.") && !(avcs && bvcs) {
			continue
		}
		if _, ok := a.Settings[k]; k == "main.version" && !ok {
			continue // a test binary, whose main is the test's
		}
		if _, ok := b.Settings[k]; k == "main.version" && !ok {
			continue
		}
		if a.Settings[k] != b.Settings[k] {
			return fmt.Sprintf("%s %q, %s %q", k, a.Settings[k], Executable, b.Settings[k])
		}
	}
	paths := make([]string, 0, len(a.Deps))
	for p := range a.Deps {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if w, ok := b.Deps[p]; ok && w != a.Deps[p] {
			return fmt.Sprintf("%s %s, %s %s", p, strings.Fields(a.Deps[p])[0], Executable, strings.Fields(w + " ?")[0])
		}
	}
	return ""
}

// errOtherBuild is the line for a helper of another build (theirs nil: one
// that does not say, from before builds were compared), or nil when it
// may be this one's.
func errOtherBuild(theirs *buildID) error {
	why := "it does not say which build it is"
	if theirs != nil {
		diff := self().differs(theirs)
		if diff == "" {
			return nil
		}
		why = "olm-cmp has " + diff
	}
	return fixedError{fmt.Errorf("%s is from another build than olm-cmp: install both from the same build (make build, make install, go install ./cmd/..., or one image; %s)", Executable, why)}
}

// Answer is what an olm-cmp-check of this build writes for results, in
// order: for tests whose scripted helper answers as a real one would (a
// failure in one job, an output olm-cmp does not accept).
func Answer(results ...Result) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(line{Build: self()})
	for i, r := range results {
		enc.Encode(line{Job: &i, Output: r.Output, Error: r.Error})
	}
	return b.Bytes()
}
