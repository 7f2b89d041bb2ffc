// Package editdist measures how far apart two short names are, for the
// "did you mean" hints of spec keys, bundle tags and patch file names.
package editdist

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
