package trust

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// RootCheckOp is the olm-cmp-check operation that parses a trusted root
// (internal/trust/rootcheck answers it). sigstore-go's parser brings
// sigstore's protobuf descriptors, whose initialisation would cost every
// olm-cmp process (internal/checkproc): a policy with keyless scopes has
// the helper parse its trusted roots when it loads, so a bad file is still
// refused then, with sigstore-go's reason.
const RootCheckOp = "sigstore-trusted-root"

// RootCheckInput is a trusted root file's bytes.
type RootCheckInput struct {
	JSON []byte `json:"json"`
}

// RootCheckOutput is the verdict: OK, or the Problem sigstore-go found.
type RootCheckOutput struct {
	OK      bool   `json:"ok,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// rootCheckTimeout bounds one olm-cmp-check run at a policy's load (a
// variable for the test of a helper that never answers).
var rootCheckTimeout = time.Minute

// errRootCheckTimeout is checkTrustedRoot's error when olm-cmp-check did
// not answer within rootCheckTimeout.
var errRootCheckTimeout = errors.New("not checked in time")

// rootVerdicts keeps the verdicts on trusted roots by the SHA-256 of their
// bytes: in memory (a server reloading its policies, a policy and the
// tenancy policies naming one file start the helper once) and, with
// KeepVerdicts, on disk for the next process of the same build (Argo CD's
// classic plugin mode loads the policy once per request). A verdict is a
// pure function of the bytes and of the build. A verdict planted in the
// cache cannot make a signature verify: olm-cmp-check parses the root
// again for each bundle it checks, and refuses one it cannot parse.
var rootVerdicts = checkproc.NewStore(rootVerdictDirName)

// rootVerdictDirName is the subdirectory of a cache directory the
// verdicts on trusted roots live in.
const rootVerdictDirName = "root-verdicts"

// KeepVerdicts makes the verdicts on trusted roots persist under cacheDir
// (created when one is first written); "" keeps them in memory only.
func KeepVerdicts(cacheDir string) { rootVerdicts.Keep(cacheDir) }

// checkTrustedRoot has olm-cmp-check parse a trusted root: problem is
// sigstore-go's reason when it is not one, err why it was not checked
// (the helper missing, stopped, out of time, or of another build), which
// never reads as a good root.
func checkTrustedRoot(data []byte) (problem string, err error) {
	in, err := json.Marshal(RootCheckInput{JSON: data})
	if err != nil {
		return "", err
	}
	key := checkproc.KeyOf(RootCheckOp, in)
	if out, ok := rootVerdicts.Get(key); ok {
		if v, ok := storedVerdict(out); ok {
			return v.Problem, nil
		}
		rootVerdicts.Forget(key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rootCheckTimeout)
	defer cancel()
	res, err := checkproc.Run(ctx, []checkproc.Job{{Op: RootCheckOp, Input: in}})
	if err != nil {
		if ctx.Err() != nil {
			return "", errRootCheckTimeout
		}
		return "", err
	}
	if res[0].Error != "" {
		return "", errors.New(res[0].Error)
	}
	var v RootCheckOutput
	if err := json.Unmarshal(res[0].Output, &v); err != nil || v.OK == (v.Problem != "") {
		return "", fmt.Errorf("%s answered something that is not a verdict on a trusted root: is it the same build as olm-cmp?", checkproc.Executable)
	}
	if out, err := json.Marshal(v); err == nil {
		rootVerdicts.Put(key, out)
	}
	return v.Problem, nil
}

// storedVerdict decodes a kept verdict: only in the exact form
// checkTrustedRoot writes (a damaged or hand-made file is not one).
func storedVerdict(out []byte) (RootCheckOutput, bool) {
	var v RootCheckOutput
	if err := json.Unmarshal(out, &v); err != nil || v.OK == (v.Problem != "") {
		return v, false
	}
	again, err := json.Marshal(v)
	return v, err == nil && bytes.Equal(again, out)
}

// rootCheckFailure words why olm-cmp-check did not parse a trusted root,
// and the fix, as internal/verify words a Sigstore bundle it did not
// check.
func rootCheckFailure(err error) string {
	switch {
	case errors.Is(err, errRootCheckTimeout):
		return fmt.Sprintf("was not checked in time (%s's bound at a policy's load is %s): retry; if it recurs, check the load on olm-cmp's host", checkproc.Executable, rootCheckTimeout)
	case errors.Is(err, checkproc.ErrMissing):
		return fmt.Sprintf("was not checked: %s, which parses Sigstore trusted roots for olm-cmp, is neither beside olm-cmp nor on PATH: install %s beside olm-cmp (make build, or go install ./cmd/... from the repository)", checkproc.Executable, checkproc.Executable)
	}
	line := "was not checked: " + oneLine(err.Error())
	if fix := checkproc.Fix(err); fix != "" {
		line += ": " + fix
	}
	return line
}
