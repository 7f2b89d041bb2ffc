package safety

import (
	"fmt"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Acknowledge marks the findings that spec.acknowledge entries name (the
// same rule, CRD, version and path, exactly) with the entry's reason, and
// returns the entries that named none, each as a line for the "matched
// nothing" warnings (an error under strict): a stale acknowledgement must not
// stay behind to pass a later, different finding. fs is changed in place.
func Acknowledge(fs []Finding, acks []spec.Acknowledgement) (unmatched []string) {
	for i, a := range acks {
		hit := false
		for j := range fs {
			f := &fs[j]
			if f.Rule == a.Rule && f.CRD == a.CRD && f.Version == a.Version && f.Path == a.Path {
				f.Acknowledged = a.Reason
				hit = true
			}
		}
		if !hit {
			unmatched = append(unmatched, fmt.Sprintf("spec.acknowledge[%d] %s matched no safety finding of this upgrade: remove it (it was for another bump, or the finding's rule, crd, version or path differ)", i, echo.Quote(a.String())))
		}
	}
	return unmatched
}
