package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Bounds of the raw diffs. difflib's matcher is quadratic, or worse, in
// the lines that differ when they interleave with lines that match (an
// enum of 10,000 values of which every other one changed: seconds; 20,000:
// half a minute). The lines both sides share at the start and at the end
// are set aside first (in linear time); when what is left is larger than
// these bounds, the raw diff replaces all of it in one hunk instead of
// finding the smallest diff. The summary still says what changed.
const (
	// maxDiffLines bounds the differing lines of one side of one object.
	maxDiffLines = 4000
	// maxDiffCells bounds the product of the differing lines of both
	// sides, summed over the objects of one comparison.
	maxDiffCells = 40_000_000
)

// unifiedDiff is the unified diff (3 lines of context) of two YAML texts;
// cells is the comparison's remaining budget of maxDiffCells. It reports
// whether the diff is difflib's (false: one hunk).
func unifiedDiff(a, b, fromFile, toFile string, cells *int) (string, bool, error) {
	la, lb := difflib.SplitLines(a), difflib.SplitLines(b)
	pre := 0
	for pre < len(la) && pre < len(lb) && la[pre] == lb[pre] {
		pre++
	}
	suf := 0
	for suf < len(la)-pre && suf < len(lb)-pre && la[len(la)-1-suf] == lb[len(lb)-1-suf] {
		suf++
	}
	ma, mb := len(la)-pre-suf, len(lb)-pre-suf
	if ma <= maxDiffLines && mb <= maxDiffLines && ma*mb <= *cells {
		*cells -= ma * mb
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: la, B: lb, FromFile: fromFile, ToFile: toFile, Context: 3})
		return text, true, err
	}
	// One hunk: up to 3 shared lines either side, the rest replaced.
	start := max(pre-3, 0)
	endA, endB := min(pre+ma+3, len(la)), min(pre+mb+3, len(lb))
	var s strings.Builder
	fmt.Fprintf(&s, "--- %s\n+++ %s\n@@ -%s +%s @@\n", fromFile, toFile, unifiedRange(start, endA), unifiedRange(start, endB))
	for _, l := range la[start:pre] {
		s.WriteString(" " + l)
	}
	for _, l := range la[pre : pre+ma] {
		s.WriteString("-" + l)
	}
	for _, l := range lb[pre : pre+mb] {
		s.WriteString("+" + l)
	}
	for _, l := range la[pre+ma : endA] {
		s.WriteString(" " + l)
	}
	return s.String(), false, nil
}

// unifiedRange is a hunk header's range as difflib writes it.
func unifiedRange(start, stop int) string {
	begin, n := start+1, stop-start
	switch n {
	case 1:
		return fmt.Sprint(begin)
	case 0:
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, n)
}
