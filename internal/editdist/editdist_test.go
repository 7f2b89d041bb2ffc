package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"crd", "crds", 1}, {"envv", "env", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"abc", "", 3}, {"valeu", "value", 2}, {"1.2.4", "1.2.3", 1}, {"greeter-extr.yaml", "greeter-extra.yaml", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestOneEditApart(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"manger", "manager", true}, {"manager", "manger", true}, {"mangaer", "manager", true},
		{"Manager", "manager", true}, {"managr", "manager", true}, {"manafer", "manager", true},
		{"manager", "manager", false}, {"log-shipper", "manager", false}, {"mgr", "manager", false},
		{"proxy", "proxy-2", false}, {"", "a", false}, {"ab", "ba", true}, {"abc", "acb", true}, {"abcd", "badc", false},
	} {
		if got := OneEditApart(tc.a, tc.b); got != tc.want {
			t.Errorf("OneEditApart(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}
