package upgrade

import (
	"strings"
	"testing"
)

// TestWriteText: one block per application, each line present only when
// it has something to say, the candidates' edges (or their absence) and
// the files written or to be written; bundle text escaped.
func TestWriteText(t *testing.T) {
	rep := &Report{Applications: []Result{
		{Dir: "apps/a", Package: "op", Current: "1.0.0", Where: "olm-cmp.yaml:9",
			Candidates: []Candidate{{Version: "1.1.0", Edges: []string{"replaces op.v1.0.0"}}, {Version: "2.0.0", Deprecated: true}},
			Chosen:     "1.1.0", Digest: "sha256:abc",
			Safety: &Safety{Verdict: "safe", UpgradeConstraintPolicy: "CatalogProvided"},
			Status: "available", Files: []string{"apps/a/olm-cmp.yaml"}},
		{Dir: "apps/b\x1b[31m", Status: "failed", Reason: "no spec"},
	}}
	var b strings.Builder
	rep.WriteText(&b, false)
	want := `apps/a (op)
  current     1.0.0
  where       olm-cmp.yaml:9
  candidates  1.1.0 (replaces op.v1.0.0)
              2.0.0 (no edge from 1.0.0) deprecated
  chosen      1.1.0 (sha256:abc)
  safety      safe (upgradeConstraintPolicy CatalogProvided)
  status      available (would write apps/a/olm-cmp.yaml)

apps/b\x1b[31m
  status      failed
  reason      no spec
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	rep.WriteText(&b, true)
	if !strings.Contains(b.String(), "(wrote apps/a/olm-cmp.yaml)") {
		t.Errorf("--write: %s", b.String())
	}
}
