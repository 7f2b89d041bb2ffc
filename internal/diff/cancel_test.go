package diff

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// Comparing is linear in the renders' size but not free (a CRD of 50,000
// properties: seconds), and `diff --timeout` bounds the whole command: a
// comparison whose context has ended stops between objects.
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
