package tenancy

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const goodPolicy = `apiVersion: olm-cmp.dev/v1alpha1
kind: TenancyPolicy
unlistedProjects: deny
projects:
- name: team-a
  images:
  - REGISTRY.A.EXAMPLE:443/team-a
  catalogs:
  - image: registry.a.example/catalogs/team-a
    packages: [demo-operator]
  registryConfig: team-a.json
- name: team-*
  images: [registry.shared.example]
  directories: true
  sidecarCredentials: true
`

func writePolicy(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "tenancy.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, text string) *Policy {
	t.Helper()
	p, err := Load(writePolicy(t, text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMatch: an exact name wins over a glob listed before or after it, a
// glob covers the rest, and nothing else is covered.
func TestMatch(t *testing.T) {
	p := mustLoad(t, goodPolicy)
	for project, want := range map[string]string{"team-a": "team-a", "team-b": "team-*", "team-": "team-*", "teamb": "", "default": ""} {
		got := ""
		if e := p.Match(project); e != nil {
			got = e.Name
		}
		if got != want {
			t.Errorf("Match(%q) = %q, want %q", project, got, want)
		}
	}
}

// TestImagesOnPathBoundary: prefixes match on a path boundary, with host
// spellings normalized as the trust policy normalizes them.
func TestImagesOnPathBoundary(t *testing.T) {
	e := mustLoad(t, goodPolicy).Match("team-a")
	for ref, want := range map[string]bool{
		"registry.a.example/team-a/op:v1":                  true,
		"registry.a.example:443/team-a/op@sha256:" + hex64: true,
		"Registry.A.Example./team-a/sub/op:v1":             true,
		"registry.a.example/team-ab/op:v1":                 false,
		"registry.a.example/team/a:v1":                     false,
		"registry.a.example:5000/team-a/op:v1":             false,
		"evil.example/registry.a.example/team-a/op:v1":     false,
	} {
		if got := e.ImageAllowed(ref); got != want {
			t.Errorf("ImageAllowed(%q) = %v, want %v", ref, got, want)
		}
	}
	if c := e.CatalogFor("registry.a.example/catalogs/team-a:latest"); c == nil || !c.PackageAllowed("demo-operator") || c.PackageAllowed("other") {
		t.Errorf("catalog entry: %+v", c)
	}
	if c := e.CatalogFor("registry.a.example/catalogs/team-ab:latest"); c != nil {
		t.Errorf("catalog prefix matched off a path boundary: %+v", c)
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestHash: layout and comments do not change the hash; a grant does, and
// only the entry it is in changes its own hash.
func TestHash(t *testing.T) {
	// One directory: the credentials directory is part of the hash.
	dir := t.TempDir()
	load := func(text string) *Policy {
		t.Helper()
		f := filepath.Join(dir, "tenancy.yaml")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := load(goodPolicy)
	b := load("# comment\n" + strings.ReplaceAll(goodPolicy, "[demo-operator]", "\n    - demo-operator"))
	if a.Hash() != b.Hash() || a.Hash() == "" {
		t.Errorf("layout changed the hash: %s vs %s", a.Hash(), b.Hash())
	}
	c := load(strings.Replace(goodPolicy, "directories: true", "directories: false", 1))
	if c.Hash() == a.Hash() {
		t.Error("a changed grant kept the hash")
	}
	if c.Match("team-a").Hash() != a.Match("team-a").Hash() || c.Match("team-b").Hash() == a.Match("team-b").Hash() {
		t.Error("entry hashes: only the changed entry's may change")
	}
}

// TestBadPolicies: each mistake is one line naming the file, the line, the
// field and the fix.
func TestBadPolicies(t *testing.T) {
	head := "apiVersion: olm-cmp.dev/v1alpha1\nkind: TenancyPolicy\nunlistedProjects: deny\nprojects:\n"
	cases := []struct{ name, text, want string }{
		{"star project", head + "- name: \"*\"\n  images: [quay.io/x]\n", `tenancy policy tenancy.yaml: line 5: projects[0].name: "*" covers every project: name the projects (team-a, team-*), and let unlistedProjects decide for the rest`},
		{"wildcard-only glob", head + "- name: \"?*\"\n  images: [quay.io/x]\n", `"?*" covers every project`},
		{"classes and a star", head + "- name: \"[a-z0-9]*\"\n  images: [quay.io/x]\n", `projects[0].name: "[a-z0-9]*" covers every project: name the projects (team-a, team-*), and let unlistedProjects decide for the rest`},
		{"class and a star", head + "- name: \"[a-z]*\"\n  images: [quay.io/x]\n", `"[a-z]*" covers every project`},
		{"negated classes and stars", head + "- name: \"*[^.]*\"\n  images: [quay.io/x]\n", `"*[^.]*" covers every project`},
		{"bang class", head + "- name: \"[!a]*-x\"\n  images: [quay.io/x]\n", `projects[0].name: "[!a]*-x": path.Match negates a class with ^, not !: write [^ instead of [!`},
		{"star image", head + "- name: a\n  images: [\"*\"]\n", `tenancy policy tenancy.yaml: line 6: projects[0].images[0]: "*" would grant every registry: name the registries (registry.example.com) or repository prefixes (quay.io/myorg) this project may use`},
		{"star catalog", head + "- name: a\n  catalogs: [{image: \"*/\", packages: [x]}]\n", `projects[0].catalogs[0].image: "*/" would grant every registry`},
		{"wildcard in prefix", head + "- name: a\n  images: [quay.io/team-*]\n", `projects[0].images[0]: "quay.io/team-*" is not a registry (registry.example.com) or repository prefix (quay.io/myorg): no tags, digests or wildcards`},
		{"tagged prefix", head + "- name: a\n  images: [quay.io/x:v1]\n", `is not a registry (registry.example.com) or repository prefix`},
		{"star with packages", head + "- name: a\n  catalogs: [{image: quay.io/c, packages: [\"*\", x]}]\n", `projects[0].catalogs[0].packages: "*" allows every package: write it alone, or list the packages`},
		{"no packages", head + "- name: a\n  catalogs: [{image: quay.io/c}]\n", `projects[0].catalogs[0].packages: is required`},
		{"grants nothing", head + "- name: a\n", `line 5: projects[0]: grants nothing (no images, catalogs or directories)`},
		{"typo", head + "- name: a\n  image: [quay.io/x]\n", `line 6: unknown field "projects[0].image": did you mean "images"?`},
		{"no default", strings.Replace(head, "unlistedProjects: deny\n", "", 1) + "- name: a\n  images: [quay.io/x]\n", `unlistedProjects: is required: deny (projects no entry names render nothing) or allow`},
		{"bad default", strings.Replace(head, "deny", "maybe", 1) + "- name: a\n  images: [quay.io/x]\n", `unlistedProjects: expected deny or allow, got "maybe"`},
		{"both credentials", head + "- name: a\n  images: [quay.io/x]\n  sidecarCredentials: true\n  registryConfig: a.json\n", `projects[0].registryConfig: set registryConfig or sidecarCredentials: true, not both`},
		{"credentials outside", head + "- name: a\n  images: [quay.io/x]\n  registryConfig: ../other/config.json\n", `projects[0].registryConfig: "../other/config.json" is not a file name below credentialsDir`},
		{"absolute credentials", head + "- name: a\n  images: [quay.io/x]\n  registryConfig: /root/.docker/config.json\n", `is not a file name below credentialsDir`},
		{"relative credentialsDir", strings.Replace(head, "projects:", "credentialsDir: creds\nprojects:", 1) + "- name: a\n  images: [quay.io/x]\n", `credentialsDir: "creds" is not an absolute path`},
		{"twice", head + "- name: a\n  images: [quay.io/x]\n- name: a\n  images: [quay.io/y]\n", `line 7: projects[1].name: "a" is also the name of the entry at line 5: merge them`},
		{"bad name", head + "- name: Team/A\n  images: [quay.io/x]\n", `"Team/A" is not an AppProject name`},
		{"bad trust policy", head + "- name: a\n  images: [quay.io/x]\n  trustPolicy: missing.yaml\n", `projects[0].trustPolicy: trust policy missing.yaml: file does not exist`},
		{"second document", head + "- name: a\n  images: [quay.io/x]\n---\nkind: x\n", `a second YAML document`},
		{"empty", "", `the file is empty`},
		{"alias bomb", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n", `tenancy policy tenancy.yaml:`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writePolicy(t, tc.text))
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || strings.Contains(msg, os.TempDir()) {
				t.Errorf("got  %s\nwant %s", msg, tc.want)
			}
		})
	}
}

// TestTooManyProjects: the entry count is bounded.
func TestTooManyProjects(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: olm-cmp.dev/v1alpha1\nkind: TenancyPolicy\nunlistedProjects: deny\nprojects:\n")
	for i := range MaxProjects + 1 {
		b.WriteString("- name: p" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + "\n  images: [quay.io/x]\n")
	}
	_, err := Load(writePolicy(t, b.String()))
	if err == nil || !strings.Contains(err.Error(), "projects: 257 entries, more than 256") {
		t.Fatalf("got %v", err)
	}
}

// TestPolicyFileNotRegular: a FIFO, or a file over the bound, is refused
// without being opened (a FIFO would block the reader for ever).
func TestPolicyFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "tenancy.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := Load(fifo); err == nil || err.Error() != "tenancy policy tenancy.yaml: is a named pipe (FIFO), not a regular file" {
		t.Errorf("FIFO: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxPolicyBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || err.Error() != "tenancy policy big.yaml: larger than 1048576 bytes" {
		t.Errorf("big: %v", err)
	}
}

// TestHostileProjectNames: names no AppProject can have are refused in one
// escaped, bounded line, whatever the policy grants.
func TestHostileProjectNames(t *testing.T) {
	p := mustLoad(t, strings.Replace(goodPolicy, "unlistedProjects: deny", "unlistedProjects: allow", 1))
	for name, want := range map[string]string{
		"team-a\nteam-b":                      `project "team-a\nteam-b" is not an AppProject name (lower-case letters, digits, '-' and '.', at most 253 characters), so tenancy policy tenancy.yaml cannot match it; fix: check what sets ARGOCD_APP_PROJECT_NAME (only the repo-server may), or the --project value`,
		"team-a/../team-b":                    `project "team-a/../team-b" is not an AppProject name`,
		"team-\x1b[31ma":                      `project "team-\x1b[31ma" is not an AppProject name`,
		strings.Repeat("a", 10<<10):           `"… (10240 bytes) is not an AppProject name`,
		"Team-A":                              `project "Team-A" is not an AppProject name`,
		"team-a\u202e":                        `is not an AppProject name`,
		strings.Repeat("a", MaxProjectName+1): `is not an AppProject name`,
	} {
		_, err := p.Tenant(name)
		var re *RefusalError
		if !errors.As(err, &re) {
			t.Errorf("%.40q: %v", name, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) || strings.ContainsAny(msg, "\n\x1b\u202e") || len(msg) > 1000 {
			t.Errorf("%.40q:\n got  %s\n want %s", name, msg, want)
		}
	}
}

// TestRefusals: the exact lines a user reads for each refusal.
func TestRefusals(t *testing.T) {
	p := mustLoad(t, goodPolicy)
	a, err := p.Tenant("team-a")
	if err != nil {
		t.Fatal(err)
	}
	check := func(err error, want string) {
		t.Helper()
		var re *RefusalError
		if !errors.As(err, &re) || err.Error() != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
	}
	check(a.Image("bundle", `spec.bundle "registry.b.example/team-b/op:v1"`, "registry.b.example/team-b/op:v1"),
		`project "team-a" may not render spec.bundle "registry.b.example/team-b/op:v1": tenancy policy tenancy.yaml line 5 (project "team-a") allows bundle images from registry.a.example/team-a only; fix: use an image from there, or ask the cluster admin to add registry.b.example/team-b/op (or its registry) to that entry's images`)
	check(a.Image("catalog", `spec.catalog "quay.io/operatorhubio/catalog:latest"`, "quay.io/operatorhubio/catalog:latest"),
		`project "team-a" may not use spec.catalog "quay.io/operatorhubio/catalog:latest": tenancy policy tenancy.yaml line 5 (project "team-a") allows catalogs registry.a.example/catalogs/team-a only; fix: use one of those catalogs, or ask the cluster admin to add this catalog with its packages to that entry's catalogs`)
	check(a.Package("registry.a.example/catalogs/team-a:v1", "cert-manager"),
		`project "team-a" may not choose package "cert-manager" from spec.catalog "registry.a.example/catalogs/team-a:v1": tenancy policy tenancy.yaml line 5 (project "team-a") allows packages demo-operator only; fix: choose one of those, or ask the cluster admin to add "cert-manager" to that entry's catalog packages`)
	check(a.Directory(`spec.bundle "./bundle"`, "./bundle"),
		`project "team-a" may not render the directory bundle spec.bundle "./bundle": tenancy policy tenancy.yaml line 5 (project "team-a") does not allow directories; fix: render a bundle image the entry allows, or ask the cluster admin to set directories: true on that entry`)
	_, err = p.Tenant("billing")
	check(err, `project "billing" may render nothing with olm-cmp: no entry of tenancy policy tenancy.yaml names it, and unlistedProjects is deny; fix: ask the cluster admin to add an entry with name: billing (docs/tenancy.md)`)
	_, err = p.Tenant("")
	check(err, `project "" is no Argo CD project (the request named none), and tenancy policy tenancy.yaml has unlistedProjects: deny; fix: render through Argo CD (the repo-server sends ARGOCD_APP_PROJECT_NAME), or pass --project NAME to the command`)
	for _, ok := range []error{
		a.Image("bundle", "x", "registry.a.example/team-a/op:v1"),
		a.Package("registry.a.example/catalogs/team-a:v1", "demo-operator"),
	} {
		if ok != nil {
			t.Errorf("refused: %v", ok)
		}
	}
	b, _ := p.Tenant("team-b")
	if err := b.Directory("x", "./bundle"); err != nil || b.Label() != "team-*" {
		t.Errorf("glob entry: %v %q", err, b.Label())
	}
	allow := mustLoad(t, strings.Replace(goodPolicy, "unlistedProjects: deny", "unlistedProjects: allow", 1))
	u, err := allow.Tenant("billing")
	if err != nil || u.Entry != nil || u.Label() != "(unlisted)" || u.Image("bundle", "x", "anything.example/x:v1") != nil {
		t.Errorf("unlisted under allow: %v %+v", err, u)
	}
}

// TestNameGlobsSound: a glob that is accepted leaves out some AppProject
// name (the rule: a glob with * names a literal character outside its
// classes), and globs of that kind are accepted.
func TestNameGlobsSound(t *testing.T) {
	probes := []string{"a", "b", "0", "a-b", "x.y"}
	for _, g := range []string{"*", "?*", "*?", "[a-z0-9]*", "[a-z]*", "[^-]*", "*[^.]*", "[a-z]*[0-9]*", "[]a]*", "[\\]]*", "team-*", "*-prod", "t[a-z]*", "*.*", "\\**", "[ab]", "??", "[a-z]?"} {
		if checkNamePattern(g) != nil {
			continue
		}
		missed := false
		for _, p := range probes {
			if ok, _ := path.Match(g, p); !ok {
				missed = true
			}
		}
		if !missed && strings.Contains(g, "*") {
			t.Errorf("%q accepted but matches every probe name", g)
		}
	}
	for _, g := range []string{"team-*", "*-prod", "t[a-z]*", "[a-z]*-x", "team-[ab]"} {
		if err := checkNamePattern(g); err != nil {
			t.Errorf("%q: %v", g, err)
		}
	}
}

// TestIPv6Prefixes: a registry at a bracketed IPv6 address is a prefix,
// normalized as references are and matched on a path boundary; brackets
// anywhere else are still wildcards.
func TestIPv6Prefixes(t *testing.T) {
	p := mustLoad(t, `apiVersion: olm-cmp.dev/v1alpha1
kind: TenancyPolicy
unlistedProjects: deny
projects:
- name: team-a
  images: ["[::1]:5000/t", "[2001:DB8::1]:5000"]
  catalogs:
  - image: "[::1]:5000/c"
    packages: ["*"]
`)
	e := p.Match("team-a")
	for ref, want := range map[string]bool{
		"[::1]:5000/t/op:v1":      true,
		"[::1]:5000/t":            true,
		"[::1]:5000/team/op:v1":   false,
		"[::1]:5001/t/op:v1":      false,
		"[2001:db8::1]:5000/x/op": true,
		"[2001:db8::2]:5000/x/op": false,
		"[::1]:5000/c/catalog:v1": false,
	} {
		if got := e.ImageAllowed(ref); got != want {
			t.Errorf("ImageAllowed(%s) = %v, want %v", ref, got, want)
		}
	}
	if e.CatalogFor("[::1]:5000/c/catalog:v1") == nil {
		t.Errorf("catalog [::1]:5000/c/catalog:v1 not covered")
	}
	head := "apiVersion: olm-cmp.dev/v1alpha1\nkind: TenancyPolicy\nunlistedProjects: deny\nprojects:\n- name: a\n  images: "
	for _, bad := range []string{`["[::1]:5000/t[ab]"]`, `["[a-z]:5000/t"]`, `["[::1"]`, `["quay.io/[::1]"]`} {
		if _, err := Load(writePolicy(t, head+bad+"\n")); err == nil || !strings.Contains(err.Error(), "is not a registry") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
