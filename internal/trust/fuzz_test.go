package trust_test

import (
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// FuzzParse: whatever the file holds, Parse returns a policy or one line
// naming the file, never a panic; a policy it returns has a hash and
// answers lookups.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\nscopes:\n- match: quay.io/x\n  mode: warn\n",
		"apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\ndirectories: refuse\nscopes:\n- match: \"*\"\n  mode: \"off\"\n  signedAs: x.io\n",
		"scopes:\n- match: a\n  keys:\n  - pem: \"-----BEGIN PUBLIC KEY-----\\nAAAA\\n-----END PUBLIC KEY-----\"\n",
		"scopes: [{match: q.io, mode: warn, gpg: {lookaside: 'https://x', keys: [{armored: x}]}}]",
		"a: &a [*a, *a]\n",
		"- - - - - [",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := trust.Parse(data, "/nonexistent/fuzz/trust.yaml")
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "trust policy trust.yaml: ") || strings.Contains(msg, "/nonexistent/fuzz") || strings.Contains(msg, "\n") {
				t.Fatalf("not one line naming the file: %q", msg)
			}
			return
		}
		if p.Hash() == "" {
			t.Fatal("a policy without a hash")
		}
		_ = p.Lookup("quay.io/x/y")
	})
}
