package diff

import (
	"cmp"
	"slices"

	"github.com/olm-cmp/olm-cmp/internal/requirements"
)

// Requirements are the requirements-report findings (package requirements)
// the bump adds or removes, compared by key (category:subject): a reviewer
// sees a new API group, image registry or dependency the operator needs
// before Argo CD applies it. A finding on both sides whose details changed
// (its source objects, its message) is neither.
type Requirements struct {
	// Added are TO's findings FROM lacks, accepted ones included (marked).
	Added []requirements.Finding `json:"added"`
	// Removed are FROM's findings TO lacks.
	Removed []requirements.Finding `json:"removed"`
}

// CompareRequirements compares the findings of two renders by key; each
// list is sorted by key.
func CompareRequirements(from, to []requirements.Finding) Requirements {
	return Requirements{Added: keysOnlyIn(to, from), Removed: keysOnlyIn(from, to)}
}

// keysOnlyIn returns the findings of a whose key b has no finding with,
// one per key, sorted by key.
func keysOnlyIn(a, b []requirements.Finding) []requirements.Finding {
	in := make(map[string]bool, len(b))
	for _, f := range b {
		in[f.Key()] = true
	}
	out := []requirements.Finding{}
	for _, f := range a {
		if !in[f.Key()] {
			in[f.Key()] = true // one per key
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(x, y requirements.Finding) int { return cmp.Compare(x.Key(), y.Key()) })
	return out
}

// changes counts both lists.
func (q Requirements) changes() int { return len(q.Added) + len(q.Removed) }
