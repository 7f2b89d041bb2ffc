package trust

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// rootVerdicts keeps the verdicts on the trusted roots this process has
// had checked, by the SHA-256 of their bytes: a server reloading its
// policies, or a policy and the tenancy policies naming one file, start
// the helper once. A verdict is a pure function of the bytes and of the
// build (olm-cmp-check is of the same build). Bounded: cleared when full.
var rootVerdicts = struct {
	sync.Mutex
	m map[[sha256.Size]byte]string
}{}

const maxRootVerdicts = 64

// checkTrustedRoot has olm-cmp-check parse a trusted root: problem is
// sigstore-go's reason when it is not one, err why it was not checked
// (the helper missing, stopped, out of time, or of another build), which
// never reads as a good root.
func checkTrustedRoot(data []byte) (problem string, err error) {
	key := sha256.Sum256(data)
	rootVerdicts.Lock()
	p, ok := rootVerdicts.m[key]
	rootVerdicts.Unlock()
	if ok {
		return p, nil
	}
	in, err := json.Marshal(RootCheckInput{JSON: data})
	if err != nil {
		return "", err
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
	var out RootCheckOutput
	if err := json.Unmarshal(res[0].Output, &out); err != nil || out.OK == (out.Problem != "") {
		return "", fmt.Errorf("%s answered something that is not a verdict on a trusted root: is it the same build as olm-cmp?", checkproc.Executable)
	}
	rootVerdicts.Lock()
	if rootVerdicts.m == nil || len(rootVerdicts.m) >= maxRootVerdicts {
		rootVerdicts.m = map[[sha256.Size]byte]string{}
	}
	rootVerdicts.m[key] = out.Problem
	rootVerdicts.Unlock()
	return out.Problem, nil
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
	return fmt.Sprintf("was not checked: %s: install %s from the same build beside olm-cmp (make build installs both), then retry; if it already is, report this line", oneLine(err.Error()), checkproc.Executable)
}
