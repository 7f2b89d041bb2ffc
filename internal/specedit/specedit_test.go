package specedit

import (
	"strings"
	"testing"
)

const file = `# Greeter, pinned by resolve.
apiVersion: olm-cmp.dev/v1alpha1
kind: OperatorBundle
spec:
  # where the bundle comes from
  bundle: quay.io/org/bundle   # the upstream image

  version: "1.0"   # bump me
  namespace: ops
  package: greeter
`

func TestApply(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		edits []Edit
		want  string // the whole output; "" with wantErr
		err   string
	}{
		{
			name:  "set a plain value, delete a line, keep comments and blank lines",
			in:    file,
			edits: []Edit{{Key: "bundle", Value: "quay.io/org/bundle:1.0@sha256:abc"}, {Key: "version", Delete: true}},
			want:  strings.Replace(strings.Replace(file, "bundle: quay.io/org/bundle ", "bundle: quay.io/org/bundle:1.0@sha256:abc ", 1), "  version: \"1.0\"   # bump me\n", "", 1),
		},
		{
			name:  "a quoted value stays quoted",
			in:    file,
			edits: []Edit{{Key: "version", Value: "1.2.3"}},
			want:  strings.Replace(file, `version: "1.0"`, `version: "1.2.3"`, 1),
		},
		{
			name:  "a missing key is added below After, indented like its neighbours",
			in:    strings.Replace(file, "  version: \"1.0\"   # bump me\n", "", 1),
			edits: []Edit{{Key: "version", Value: "2.0", After: "package"}},
			want:  strings.Replace(file, "  version: \"1.0\"   # bump me\n", "", 1) + "  version: \"2.0\"\n",
		},
		{
			name:  "a plain value that YAML would not read as a string is quoted",
			in:    "spec:\n  version: 1.0.0\n",
			edits: []Edit{{Key: "version", Value: "1.0"}},
			want:  "spec:\n  version: \"1.0\"\n",
		},
		{
			name:  "no change, no difference",
			in:    file,
			edits: []Edit{{Key: "namespace", Value: "ops"}, {Key: "channel", Delete: true}},
			want:  file,
		},
		{
			name:  "a key added below a key this edit adds goes below it",
			in:    "spec:\n  bundle: quay.io/org/b:1.0\n  namespace: ops\n",
			edits: []Edit{{Key: "bundle", Value: "quay.io/org/b"}, {Key: "version", Value: "1.0", After: "bundle"}, {Key: "digest", Value: "sha256:abc", After: "version"}},
			want:  "spec:\n  bundle: quay.io/org/b\n  version: \"1.0\"\n  digest: \"sha256:abc\"\n  namespace: ops\n",
		},
		{
			name:  "a CRLF file gets CRLF lines",
			in:    "spec:\r\n  bundle: quay.io/org/b\r\n  version: \"1.0\"\r\n  namespace: ops\r\n",
			edits: []Edit{{Key: "version", Value: "1.1"}, {Key: "digest", Value: "sha256:abc", After: "version"}, {Key: "channel", Value: "stable", After: "digest"}},
			want:  "spec:\r\n  bundle: quay.io/org/b\r\n  version: \"1.1\"\r\n  digest: \"sha256:abc\"\r\n  channel: \"stable\"\r\n  namespace: ops\r\n",
		},
		{
			name:  "a CRLF file whose last line has no break",
			in:    "spec:\r\n  namespace: ops\r\n  bundle: quay.io/org/b",
			edits: []Edit{{Key: "version", Value: "1.0", After: "bundle"}, {Key: "digest", Value: "sha256:abc", After: "version"}},
			want:  "spec:\r\n  namespace: ops\r\n  bundle: quay.io/org/b\r\n  version: \"1.0\"\r\n  digest: \"sha256:abc\"",
		},
		{name: "flow style is refused", in: "spec: {bundle: a, version: b}\n", edits: []Edit{{Key: "version", Delete: true}}, err: "flow style"},
		{name: "a block scalar is refused", in: "spec:\n  bundle: |\n    a\n", edits: []Edit{{Key: "bundle", Value: "b"}}, err: "spec.bundle: is a block scalar"},
		{name: "no spec", in: "kind: x\n", edits: []Edit{{Key: "bundle", Value: "b"}}, err: "no spec mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply([]byte(tc.in), tc.edits)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
