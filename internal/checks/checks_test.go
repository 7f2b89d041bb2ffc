package checks

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/safety/crdop"
	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
	"github.com/olm-cmp/olm-cmp/internal/verify/bundlejob"
)

// Every operation internal/validate, internal/verify, internal/trust and
// internal/safety send is served.
func TestHandlersServeEveryOperationSent(t *testing.T) {
	hs := Handlers()
	for _, op := range []string{apiop.CRD, apiop.CustomResources, apiop.WebhookClientConfig, bundlejob.Op, trust.RootCheckOp, crdop.Upgrade} {
		if hs[op] == nil {
			t.Errorf("no handler for %q", op)
		}
	}
}

// heavy are the packages that must stay in olm-cmp-check: linked into
// olm-cmp, their package initialisation is paid by every process
// (internal/checkproc says why).
var heavy = []string{
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation",
	"k8s.io/apiextensions-apiserver/pkg/apiserver/",
	"k8s.io/apiserver/",
	"github.com/google/cel-go/",
	"k8s.io/component-base/metrics/legacyregistry",
	"github.com/olm-cmp/olm-cmp/internal/checks",
	"github.com/olm-cmp/olm-cmp/internal/validate/apicheck",
	// sigstore-go (bundles, trusted roots) and sigstore/sigstore bring
	// sigstore's protobuf descriptors, built at initialisation.
	"github.com/sigstore/",
	"google.golang.org/genproto/googleapis/api",
	"github.com/sigstore/timestamp-authority/",
	// crdify, and go-cmp, whose initialisation compiles regular
	// expressions (internal/safety/crdcheck).
	"sigs.k8s.io/crdify/",
	"github.com/google/go-cmp/",
	"github.com/olm-cmp/olm-cmp/internal/safety/crdcheck",
}

// olm-cmp links none of them; olm-cmp-check links them (or the test
// would pass with the checks gone).
func TestHeavyPackagesStayInTheHelper(t *testing.T) {
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return "\n" + string(out)
	}
	olmCmp, helper := deps("github.com/olm-cmp/olm-cmp/cmd/olm-cmp"), deps("github.com/olm-cmp/olm-cmp/cmd/olm-cmp-check")
	for _, h := range heavy {
		if strings.Contains(olmCmp, "\n"+h) {
			t.Errorf("olm-cmp links %s", h)
		}
		if !strings.Contains(helper, "\n"+h) {
			t.Errorf("olm-cmp-check does not link %s", h)
		}
	}
}
