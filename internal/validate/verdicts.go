package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
)

// The checks only the API server's own libraries make (a CRD's definition,
// a custom resource against its CRD, a webhook's clientConfig) run in
// olm-cmp-check (internal/checkproc, internal/validate/apicheck): a render
// sends every check it needs and has no verdict for in one batch, one
// process, before it judges its objects, and judges nothing when the
// batch fails.
//
// Each is a pure function of its input, so its verdict is kept by content
// (checkproc.Store): in memory for a sidecar, and on disk beside the bundles
// the same commands pull for the processes that follow (Argo CD's classic
// plugin mode runs `olm-cmp generate` for every request, CI runs `diff` for
// every pull request): a render that meets nothing new starts no process.
// Compiling the CEL rules of sail-operator's CRDs is about 0.4 CPU-seconds,
// two thirds of a cold one-shot render.

// verdictDirName is the subdirectory of a cache directory verdicts live in.
const verdictDirName = "verdicts"

// oldVerdictDirName is where builds before olm-cmp-check kept CRD verdicts:
// no build reads them any more.
const oldVerdictDirName = "crd-verdicts"

// maxVerdictLines bounds a verdict read back: a few problem lines (each as
// the render prints it), never more than a check writes.
const maxVerdictLines = apiop.MaxProblems

// verdicts holds every check's verdict (its apiop.Verdict as olm-cmp-check
// wrote it) by key.
var verdicts = checkproc.NewStore(verdictDirName)

// KeepVerdicts makes verdicts persist under cacheDir (created when a
// verdict is first written), so later processes sharing the directory skip
// the checks this one made. "" keeps them in memory only. Safe for
// concurrent use; the last call wins.
func KeepVerdicts(cacheDir string) {
	verdicts.Keep(cacheDir)
	if cacheDir != "" {
		os.RemoveAll(filepath.Join(cacheDir, oldVerdictDirName))
	}
}

// pending is one check for olm-cmp-check: its operation, the key of its
// verdict, and its input (load, called only when the verdict is not
// cached). what names the object, for the line when it cannot be checked.
// err, when set, is the validator's own failure to write the job.
// version, for a custom resource, is the CRD version it is checked
// against: the custom resources of a version go in one job, the schema
// once.
type pending struct {
	op, what string
	key      checkproc.Key
	load     func() ([]byte, error)
	err      error
	version  *crVersion
}

// cached returns p's verdict if this render, this process or the cache
// directory has it.
func (v *validator) cached(p pending) ([]string, bool) {
	if problems, ok := v.verdicts[p.key]; ok {
		return problems, true
	}
	out, ok := verdicts.Get(p.key)
	if !ok {
		return nil, false
	}
	problems, ok := decodeVerdict(out)
	if !ok { // not a verdict this build wrote in the form it writes
		verdicts.Forget(p.key)
		return nil, false
	}
	v.verdicts[p.key] = problems
	return problems, true
}

// decodeVerdict reads an apiop.Verdict: only the exact bytes
// olm-cmp-check writes count (json.Unmarshal would also take null, {},
// {"PROBLEMS":[]} or extra keys as "no problems").
func decodeVerdict(out []byte) ([]string, bool) {
	var v apiop.Verdict
	if err := json.Unmarshal(out, &v); err != nil || len(v.Problems) > maxVerdictLines {
		return nil, false
	}
	if again, err := json.Marshal(v); err != nil || string(again) != string(out) {
		return nil, false
	}
	return v.Problems, true
}

// verdict is p's verdict: cached, or checked now (a batch of one; a render
// has sent its whole batch before its objects ask).
func (v *validator) verdict(p pending) ([]string, error) {
	if p.err != nil {
		return nil, p.err
	}
	if problems, ok := v.cached(p); ok {
		return problems, nil
	}
	if err := v.check([]pending{p}); err != nil {
		return nil, err
	}
	return v.verdicts[p.key], nil
}

// check runs the checks todo in one olm-cmp-check process and keeps their
// verdicts. Any failure fails them all: an object is never judged without
// its check.
func (v *validator) check(todo []pending) error {
	if len(todo) == 0 {
		return nil
	}
	if v.ctx.Err() != nil {
		return context.Cause(v.ctx)
	}
	jobs, units, err := batch(todo)
	if err != nil {
		return err
	}
	// Each verdict is kept as it arrives, so a batch stopped at the
	// render's deadline still spares the next render what it finished;
	// the first job (in order) that failed is the line.
	failed, why := len(jobs), error(nil)
	err = checkproc.RunEach(v.ctx, jobs, func(i int, r checkproc.Result) {
		if kerr := v.keep(units[i], r); kerr != nil && i < failed {
			failed, why = i, kerr
		}
	})
	if err != nil {
		if v.ctx.Err() != nil {
			return context.Cause(v.ctx)
		}
		if fix := checkproc.Fix(err); fix != "" {
			err = fmt.Errorf("%w; %s", err, fix)
		}
		return unchecked(todo, err)
	}
	return why
}

// batch writes the checks todo as olm-cmp-check's jobs: one per check, but
// for custom resources one per CRD version (its schema once, then the
// objects) until the objects reach chunkBytes. units[i] are the checks
// jobs[i] answers. The request's size is known from its inputs before it
// is written: over checkproc's bound, it is not.
func batch(todo []pending) (jobs []checkproc.Job, units [][]pending, err error) {
	objects := map[int][]json.RawMessage{}
	unitOf := map[*crVersion]int{} // the version's job taking objects
	filled := map[*crVersion]int{} // the bytes of its objects
	size := 0
	for _, p := range todo {
		in, err := p.load()
		if err != nil {
			return nil, nil, err
		}
		size += len(in) + jobOverhead
		if p.version == nil {
			jobs, units = append(jobs, checkproc.Job{Op: p.op, Input: in}), append(units, []pending{p})
			continue
		}
		i, ok := unitOf[p.version]
		if !ok || filled[p.version] >= chunkBytes(p.version) {
			i = len(jobs)
			unitOf[p.version], filled[p.version] = i, 0
			jobs, units = append(jobs, checkproc.Job{Op: p.op}), append(units, nil)
			size += len(p.version.input.Schema) + jobOverhead
		}
		units[i], objects[i] = append(units[i], p), append(objects[i], in)
		filled[p.version] += len(in)
	}
	if size > checkproc.MaxRequestBytes {
		return nil, nil, unchecked(todo, fmt.Errorf("the CustomResourceDefinitions, custom resources and webhook configurations to check are %d bytes, more than the %d bytes %s takes at once; fix: ship fewer or smaller custom resources (spec.examples, spec.exclude, the extra manifests) or CustomResourceDefinitions", size, checkproc.MaxRequestBytes, checkproc.Executable))
	}
	for i, objs := range objects {
		in := units[i][0].version.input
		in.Objects = objs
		if jobs[i].Input, err = json.Marshal(in); err != nil {
			return nil, nil, unchecked(units[i], err)
		}
	}
	return jobs, units, nil
}

// chunkBytes is how many bytes of custom resources one job of cv takes
// before the next job begins: its schema's size, at least minChunkBytes.
// The schema so takes at most half of a request (sent with each of 330
// custom resources, a 1.4 MB schema made a request of 460 MB), and a job
// of objects whose CEL rules each exhaust the server's cost budget (about
// 4 CPU-s an object, measured) is not a whole version's: olm-cmp-check
// answers job by job, and the verdicts of the jobs done are kept when the
// render's deadline stops it.
//
// A schema with CEL rules (x-kubernetes-validations) of at most
// maxSoloSchemaBytes takes one object a job: what a rule costs does not
// follow an object's size (1.7 KB objects each ran the server's whole
// budget, about 2 CPU-s, so twenty of them in one job outlasted Argo CD's
// 60 s every time and a retry began again from nothing: a breaker), and a
// job's verdict is kept as soon as it is answered, so each retry goes on
// where the last one stopped. Larger schemas keep the size rule, which
// bounds the request: each job carries its schema.
func chunkBytes(cv *crVersion) int {
	if len(cv.input.Schema) <= maxSoloSchemaBytes && bytes.Contains(cv.input.Schema, celRulesKey) {
		return 1
	}
	return max(len(cv.input.Schema), minChunkBytes)
}

const (
	minChunkBytes      = 64 << 10
	maxSoloSchemaBytes = 64 << 10
)

// celRulesKey is how a schema's JSON names a CEL rule list.
var celRulesKey = []byte(`"x-kubernetes-validations"`)

// jobOverhead is more than what a request adds to a job's input: its
// operation's name and the JSON around them.
const jobOverhead = 64

// keep keeps the verdicts of the checks unit, which one job answered with
// r: one verdict, or for custom resources one per object.
func (v *validator) keep(unit []pending, r checkproc.Result) error {
	if r.Error != "" {
		return unchecked(unit, fmt.Errorf("%s", r.Error))
	}
	outs, ok := splitVerdicts(unit, r.Output)
	if !ok {
		return unchecked(unit, fmt.Errorf("%s answered something that is not a verdict: is it the same build as olm-cmp?", checkproc.Executable))
	}
	for j, p := range unit {
		problems, ok := decodeVerdict(outs[j])
		if !ok {
			return unchecked(unit[j:j+1], fmt.Errorf("%s answered something that is not a verdict: is it the same build as olm-cmp?", checkproc.Executable))
		}
		v.verdicts[p.key] = problems
		verdicts.Put(p.key, outs[j])
	}
	return nil
}

// splitVerdicts is the apiop.Verdict of each check of unit in out: out
// itself, or for custom resources each of its apiop.Verdicts written as
// olm-cmp-check writes a verdict, when out is exactly what this build
// writes for as many objects.
func splitVerdicts(unit []pending, out []byte) ([][]byte, bool) {
	if unit[0].version == nil {
		return [][]byte{out}, true
	}
	var all apiop.Verdicts
	if err := json.Unmarshal(out, &all); err != nil || len(all.Verdicts) != len(unit) {
		return nil, false
	}
	if again, err := json.Marshal(all); err != nil || string(again) != string(out) {
		return nil, false
	}
	outs := make([][]byte, len(all.Verdicts))
	for i, one := range all.Verdicts {
		b, err := json.Marshal(one)
		if err != nil {
			return nil, false
		}
		outs[i] = b
	}
	return outs, true
}

// unchecked is the one line of a batch that failed: the objects it was to
// check, then why (checkproc's or the check's words, and the fix).
func unchecked(todo []pending, err error) error {
	var objects []string
	seen := map[string]bool{}
	for _, p := range todo {
		if !seen[p.what] {
			seen[p.what] = true
			objects = append(objects, p.what)
		}
	}
	what := objects[0] + " could not be checked as the API server would check it"
	if len(objects) > 1 {
		what = fmt.Sprintf("%s and %d more objects could not be checked as the API server would check them", objects[0], len(objects)-1)
	}
	return fmt.Errorf("%s, so nothing is rendered: %s", what, strings.TrimSpace(err.Error()))
}

// plan sends, before the render's objects are judged, every check they
// need and have no verdict for, in one batch: CRDs, custom resources of
// the CRDs the render ships, webhooks' client configs. A custom resource
// of a CRD whose verdict is not known yet is sent too (the CRD's verdict
// decides afterwards whether it counts), so a render starts one process.
func (v *validator) plan(nodes []*yaml.RNode) error {
	if err := v.planBuiltins(nodes); err != nil {
		return err
	}
	var todo []pending
	queued := map[checkproc.Key]bool{}
	need := func(p pending) error {
		if p.err != nil {
			return p.err
		}
		if p.op == "" || queued[p.key] {
			return nil
		}
		if _, ok := v.cached(p); !ok {
			queued[p.key] = true
			todo = append(todo, p)
		}
		return nil
	}
	var crs []*yaml.RNode
	for _, n := range nodes {
		if e := v.byNode[n]; e != nil {
			p := v.crdJob(e)
			if err := need(p); err != nil {
				return err
			}
			if problems, ok := v.cached(p); ok {
				e.checked, e.problems = true, problems
			}
			continue
		}
		crs = append(crs, n)
	}
	for _, n := range crs {
		ps, err := v.jobsOf(n)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if err := need(p); err != nil {
				return err
			}
		}
	}
	if err := v.check(todo); err != nil {
		return err
	}
	for _, e := range v.byNode {
		if _, err := v.crdVerdict(e); err != nil {
			return err
		}
	}
	return nil
}
