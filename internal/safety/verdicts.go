package safety

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/safety/crdop"
)

// crdify's comparison of a CRD with the one it replaces runs in
// olm-cmp-check (internal/safety/crdcheck; internal/checkproc says why):
// Check sends every pair of CRDs it needs compared and has no verdict for
// in one batch, one process, and judges nothing when the batch fails.
//
// The comparison is a pure function of the two CRDs (and the build), so
// its verdict is kept by content (checkproc.Store): in memory for a
// sidecar, and on disk beside the bundles for the processes that follow
// (CI runs `diff` for every pull request, the bot `upgrade` for every
// application): a check that meets nothing new starts no process.

// verdictDirName is the subdirectory of a cache directory verdicts live in.
const verdictDirName = "upgrade-verdicts"

// verdicts holds each comparison's verdict (its crdop.Verdict as
// olm-cmp-check wrote it) by key.
var verdicts = checkproc.NewStore(verdictDirName)

// KeepVerdicts makes verdicts persist under cacheDir (created when a
// verdict is first written), so later processes sharing the directory skip
// the comparisons this one made. "" keeps them in memory only. Safe for
// concurrent use; the last call wins.
func KeepVerdicts(cacheDir string) { verdicts.Keep(cacheDir) }

// comparison is one pair of CRDs for olm-cmp-check: its input
// (crdop.Input) and the key of its verdict.
type comparison struct {
	crd   string
	key   checkproc.Key
	input []byte
}

// pairKey is the key of the verdict on old, the JSON of the CRD the
// cluster runs, and cur, its successor's: the rest of the comparison's
// input (the stored versions) is a function of old. No JSON holds a NUL
// byte, so the two cannot run together.
func pairKey(old, cur []byte) checkproc.Key {
	return checkproc.KeyOf(crdop.Upgrade, slices.Concat(old, []byte{0}, cur))
}

// cachedVerdict is key's verdict, if this process or the cache directory
// has one.
func cachedVerdict(key checkproc.Key) ([]Finding, bool) {
	raw, ok := verdicts.Get(key)
	if !ok {
		return nil, false
	}
	fs, ok := decodeVerdict(raw)
	if !ok { // not a verdict this build wrote in the form it writes
		verdicts.Forget(key)
	}
	return fs, ok
}

// newComparison is the comparison of CRD name, whose verdict's key is key
// (pairKey of in's CRDs).
func newComparison(name string, key checkproc.Key, in crdop.Input) (comparison, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return comparison{}, fmt.Errorf("internal error: CRD %s could not be written for the upgrade-safety check (please report it): %v", name, err)
	}
	return comparison{crd: name, key: key, input: data}, nil
}

// compare returns the findings of the comparisons sent, none of them
// cached, made in one olm-cmp-check process (and kept). Any failure fails
// them all: an upgrade is never judged safe without its comparisons.
func compare(ctx context.Context, sent []comparison) ([]Finding, error) {
	if len(sent) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Finding
	jobs := make([]checkproc.Job, len(sent))
	for i, c := range sent {
		jobs[i] = checkproc.Job{Op: crdop.Upgrade, Input: c.input}
	}
	results, err := checkproc.Run(ctx, jobs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if fix := checkproc.Fix(err); fix != "" {
			err = fmt.Errorf("%w; %s", err, fix)
		}
		return nil, uncompared(sent, err)
	}
	for i, r := range results {
		if r.Error != "" {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, uncompared(sent[i:i+1], errors.New(r.Error))
		}
		fs, ok := decodeVerdict(r.Output)
		if !ok {
			return nil, uncompared(sent[i:i+1], fmt.Errorf("%s answered something that is not a verdict: is it the same build as olm-cmp?", checkproc.Executable))
		}
		out = append(out, fs...)
		verdicts.Put(sent[i].key, r.Output)
	}
	return out, nil
}

// decodeVerdict reads a crdop.Verdict: only the exact bytes olm-cmp-check
// writes count (json.Unmarshal would also take null, {}, an empty list or
// extra keys as "no findings": it writes null), and each finding's severity must be one Check knows.
func decodeVerdict(out []byte) ([]Finding, bool) {
	var v crdop.Verdict
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, false
	}
	if again, err := json.Marshal(v); err != nil || string(again) != string(out) || (v.Findings != nil && len(v.Findings) == 0) {
		return nil, false
	}
	fs := make([]Finding, len(v.Findings))
	for i, f := range v.Findings {
		if f.Severity != crdop.Error && f.Severity != crdop.Warning {
			return nil, false
		}
		fs[i] = Finding{Severity: Severity(f.Severity), Rule: f.Rule, CRD: f.CRD, Version: f.Version, Path: f.Path, Message: f.Message}
	}
	return fs, true
}

// maxNamed is how many CRDs the line of a failed batch names.
const maxNamed = 3

// uncompared is the one line of a batch that failed: the CRDs it was to
// compare, then why (checkproc's or the check's words, and the fix).
func uncompared(todo []comparison, err error) error {
	names := make([]string, 0, maxNamed)
	for _, c := range todo[:min(len(todo), maxNamed)] {
		names = append(names, c.crd)
	}
	what := "CRD " + names[0] + " could not be compared with the CRD the cluster runs"
	if len(todo) > 1 {
		what = "CRDs " + strings.Join(names, ", ")
		if more := len(todo) - len(names); more > 0 {
			what += fmt.Sprintf(" and %d more", more)
		}
		what += " could not be compared with the CRDs the cluster runs"
	}
	return fmt.Errorf("%s, so the upgrade's safety is unknown: %s", what, strings.TrimSpace(err.Error()))
}
