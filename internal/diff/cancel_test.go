package diff

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Comparing is linear in the renders' size but not free (a CRD of 100,000
// properties: a second or two), and `diff --timeout` bounds the whole
// command: a comparison whose context has ended stops between objects.
func TestCompareContextStops(t *testing.T) {
	var from, to []string
	for i := range 50 {
		from = append(from, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: {a: old}\n", i))
		to = append(to, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: {a: new}\n", i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := CompareContext(ctx, from, to, "", "")
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("got %v, %v; want the cancellation", r, err)
	}
	if r, err := CompareContext(context.Background(), from, to, "", ""); err != nil || len(r.Changed) != 50 {
		t.Fatalf("got %v, %v; want 50 changed", r, err)
	}
}

// countdown is a context whose deadline passes at its n-th check (Err), and
// that counts its checks: where a comparison checks is then exact, not a
// matter of timing.
type countdown struct {
	context.Context
	n, calls atomic.Int64
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	c.calls.Add(1)
	if c.n.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *countdown) Deadline() (time.Time, bool) { return time.Time{}, false }

// bigCRDText is a rendered CRD (block YAML, as the renderer prints it) of
// props string properties, typ their type.
func bigCRDText(props int, typ string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ws.example.com\nspec:\n  group: example.com\n  names:\n    kind: W\n    plural: ws\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n")
	for i := range props {
		fmt.Fprintf(&b, "              f%d:\n                type: %s\n", i, typ)
	}
	return b.String()
}

// TestCompareChecksInsideABigCRD: the comparison of two CRDs of 10,000
// properties checks its context while it parses them (every 512 bytes
// read) and while it summarises them (every few thousand schema nodes), not
// only between objects: whichever check the deadline passes at, the
// comparison returns the deadline's error and no report.
func TestCompareChecksInsideABigCRD(t *testing.T) {
	from, to := []string{bigCRDText(10000, "string")}, []string{bigCRDText(10000, "integer")}
	size := int64(len(from[0]) + len(to[0]))
	full := newCountdown(1 << 62)
	r, err := CompareContext(full, from, to, "", "")
	if err != nil || len(r.Changed) != 1 || !strings.Contains(strings.Join(r.Changed[0].Summary, "\n"), "v1: schema changed") {
		t.Fatalf("got %+v, %v", r, err)
	}
	// Parsing alone reads the documents 512 bytes at a time.
	checks := full.calls.Load()
	if checks < size/512 {
		t.Fatalf("%d checks for %d bytes of YAML: want one per 512 bytes read at least", checks, size)
	}
	for _, at := range []int64{0, 1, checks / 4, checks / 2, checks - 2, checks - 1} {
		ctx := newCountdown(at)
		r, err := CompareContext(ctx, from, to, "", "")
		if !errors.Is(err, context.DeadlineExceeded) || r != nil || err.Error() != "comparing the renders: context deadline exceeded" {
			t.Errorf("deadline at check %d of %d: got a report %t, %v", at, checks, r != nil, err)
		}
		// The check past the deadline, and one more to say why.
		if n := ctx.calls.Load(); n > at+2 {
			t.Errorf("deadline at check %d: %d checks, want it to stop at the first one past the deadline", at, n)
		}
	}
}

// The summary of a CRD stops on its own too: its walk checks every
// checkEvery nodes.
func TestSummarizeCRDStops(t *testing.T) {
	from, to := bigCRDText(10000, "string"), bigCRDText(10000, "integer")
	a, err := parseDocument(context.Background(), from)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseDocument(context.Background(), to)
	if err != nil {
		t.Fatal(err)
	}
	ctx := newCountdown(3)
	if got, err := summarizeCRD(ctx, a.YNode(), b.YNode()); !errors.Is(err, context.DeadlineExceeded) || got != nil {
		t.Fatalf("got %q, %v", got, err)
	}
	if n := ctx.calls.Load(); n != 4 {
		t.Errorf("%d checks, want 4 (it stops at the first past the deadline)", n)
	}
}
