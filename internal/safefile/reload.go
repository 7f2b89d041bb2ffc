package safefile

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Reloading is a value loaded from a file (a policy a volume mounts) at
// start, then again whenever that file or a file the value read changed (as
// a ConfigMap update swaps them: the tenancy policy's trustPolicy files, a
// trust policy's key files). A load that fails fails every Get until the
// file is fixed, never a fall back to the old value. The trust and tenancy
// policies are mounted and reloaded alike.
type Reloading[T any] struct {
	path string
	load func(path string) (T, error)
	// files are the files a loaded value was read from (path among them);
	// nil: path alone.
	files func(T) []string

	mu      sync.Mutex
	watched []string // the files of the value loaded, sorted
	stamp   string   // their stamp before the load; "" loads again
	v       T
	err     error
}

// NewReloading loads path with load, and returns the value that loads it
// again when it changes; files lists what a loaded value read besides path
// (nil: path alone). A first load that fails is returned, so a command
// with a broken policy does not start.
func NewReloading[T any](path string, load func(string) (T, error), files func(T) []string) (*Reloading[T], error) {
	r := &Reloading[T]{path: path, load: load, files: files, watched: []string{path}}
	if _, err := r.Get(); err != nil {
		return nil, err
	}
	return r, nil
}

// Get is the value as the files are now.
func (r *Reloading[T]) Get() (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stamp != "" && StampAll(r.watched) == r.stamp {
		return r.v, r.err
	}
	// Stamp before loading (a change during the load is seen next time);
	// a value that read other files than were stamped is loaded again
	// with those stamped.
	watch := r.watched
	for range 3 {
		stamp := StampAll(watch)
		r.v, r.err = r.load(r.path)
		got := []string{r.path}
		if r.err == nil && r.files != nil {
			got = append(r.files(r.v), r.path)
		}
		slices.Sort(got)
		got = slices.Compact(got)
		r.watched = got
		if r.err != nil {
			r.stamp = "" // loaded again on every use until it loads
			return r.v, r.err
		}
		if slices.Equal(got, watch) {
			r.stamp = stamp
			return r.v, r.err
		}
		watch = got
	}
	r.stamp = ""
	return r.v, r.err
}

// Getter is Get as a function (engine.EngineOptions.Verifier, the tenancy
// renderers' policy), nil for a nil Reloading (no policy).
func (r *Reloading[T]) Getter() func() (T, error) {
	if r == nil {
		return nil
	}
	return r.Get
}

// StampAll names the version of files (the Stamp of each); "" when one
// cannot be read.
func StampAll(files []string) string {
	var b strings.Builder
	for _, f := range files {
		st := Stamp(f)
		if st == "" {
			return ""
		}
		fmt.Fprintf(&b, "%s\x00%s\x00", f, st)
	}
	return b.String()
}
