// Package editdist measures how far apart two short names are, for the
// "did you mean" hints of spec keys, bundle tags and patch file names.
package editdist

import "strings"

// Distance is the Levenshtein distance of a and b (insertions, deletions
// and substitutions of one byte). A small hand-written function: the names
// compared are short, and no dependency of the module offers one. Callers
// bound what they compare (keys, tags, file names), so the two rows of
// len(b)+1 stay small.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// OneEditApart reports whether a and b differ by exactly one insertion,
// deletion, substitution or swap of adjacent characters, or only in case:
// how a key is misspelt. It is linear: no distance matrix over input that
// may be long.
func OneEditApart(a, b string) bool {
	if a == b || a == "" || b == "" {
		return false
	}
	if strings.EqualFold(a, b) {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		if a[i+1:] == b[i+1:] {
			return true // substitution
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // swap
	}
	return a[i:] == b[i+1:] // insertion
}

// Nearest is the name of names nearest to typed, ignoring case, when it is
// near enough to be a typo of it (at most 2 edits, or a quarter of typed's
// length), else "". A name equal to typed is passed over; ties go to the
// first listed. The spec keys' and the command line's did-you-means.
func Nearest(typed string, names []string) string {
	best, bestDist := "", -1
	lower := strings.ToLower(typed)
	for _, n := range names {
		if n == typed {
			continue
		}
		if d := Distance(lower, strings.ToLower(n)); bestDist < 0 || d < bestDist {
			best, bestDist = n, d
		}
	}
	if best != "" && bestDist <= max(2, len(typed)/4) {
		return best
	}
	return ""
}
