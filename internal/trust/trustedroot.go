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

// rootCheckTimeout bounds one olm-cmp-check run at a policy's load.
const rootCheckTimeout = time.Minute

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
