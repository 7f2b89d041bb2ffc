package transform

import (
	"fmt"
	"slices"
	"strings"
)

// A spec entry that selects nothing changes nothing, and a typo there must
// not go unnoticed. The steps that apply such entries (exclude, images,
// patches' deletions) report each one through Options.Unmatched, one line
// naming the entry and what there was to match instead; render makes those
// lines warnings, or one error under spec.strict (requirements does the
// same for spec.accept). Entries that already fail the render when they
// match nothing (a patch's target, an examples kind) are errors anyway.

// maxListed bounds the alternatives a no-op message lists; maxKinds the
// kinds (a bundle renders about fifteen, a typo is best seen among all).
const (
	maxListed = 10
	maxKinds  = 30
)

// listSome joins the distinct items in their order, at most maxListed of
// them, counting the rest; "none" when there are none.
func listSome(items []string) string { return listUpTo(items, maxListed) }

// listUpTo is listSome listing at most limit items.
func listUpTo(items []string, limit int) string {
	var seen []string
	for _, it := range items {
		if !slices.Contains(seen, it) {
			seen = append(seen, it)
		}
	}
	if len(seen) == 0 {
		return "none"
	}
	out := strings.Join(seen[:min(len(seen), limit)], ", ")
	if more := len(seen) - limit; more > 0 {
		out += fmt.Sprintf(" (and %d more)", more)
	}
	return out
}
