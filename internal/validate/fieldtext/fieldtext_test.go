package fieldtext

import (
	"strings"
	"testing"
)

// A cut counts what an earlier cut left out: olm-cmp-check cuts a verdict,
// the error line cuts it again, and the count stays true.
func TestCutCountsEarlierCuts(t *testing.T) {
	for _, c := range []struct {
		in   []string
		n    int
		want string
	}{
		{[]string{"a", "b", "c"}, 3, "a|b|c"},
		{[]string{"a", "b", "c", "d", "e"}, 3, "a|b|c|and 2 more"},
		{[]string{"a", "b", "c", "and 2 more"}, 2, "a|b|and 3 more"},
		{[]string{"a", "and 5 more"}, 3, "a|and 5 more"},
		{[]string{"a", "and 05 more"}, 1, "a|and 1 more"}, // not a count Cut wrote: a problem
	} {
		if got := strings.Join(Cut(c.in, c.n), "|"); got != c.want {
			t.Errorf("Cut(%q, %d) = %s, want %s", c.in, c.n, got, c.want)
		}
	}
}
