package validate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/checks"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
)

// A batch stopped at the render's deadline keeps the verdicts of the checks
// that finished (a cold check longer than Argo CD's deadline would
// otherwise never make progress): here one CRD's check never ends, the
// other's verdict is kept.
func TestVerdictsOfAStoppedBatchAreKept(t *testing.T) {
	saved := verdicts
	verdicts = checkproc.NewStore(verdictDirName) // nothing cached
	defer func() { verdicts = saved }()
	handlers := checks.Handlers()
	crd := handlers[apiop.CRD]
	handlers[apiop.CRD] = func(ctx context.Context, in json.RawMessage) (any, error) {
		if strings.Contains(string(in), "hangs.example.com") {
			<-ctx.Done() // as long as the helper lives
			return nil, context.Cause(ctx)
		}
		return crd(ctx, in)
	}
	defer checkproc.AnswerInProcess(handlers)()

	finishes := demoCRD(t)
	hangs := strings.ReplaceAll(finishes, "greeter.example.com", "hangs.example.com")
	nodes, err := kio.FromBytes([]byte(finishes + "\n---\n" + hangs))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Objects(ctx, nil).Filter(nodes); err == nil {
		t.Fatal("rendered although a CRD's check never ended")
	}
	k, ok := (&validator{}).crdKey(yaml.MustParse(finishes))
	if !ok {
		t.Fatal("no key")
	}
	if _, ok := verdicts.Get(k); !ok {
		t.Error("the verdict of the CRD whose check finished was not kept")
	}
	hk, _ := (&validator{}).crdKey(yaml.MustParse(hangs))
	if _, ok := verdicts.Get(hk); ok {
		t.Error("a verdict was kept for the check that never ended")
	}
}
