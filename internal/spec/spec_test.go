package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

const minimal = `apiVersion: olm-cmp.dev/v1alpha1
kind: OperatorBundle
metadata: {name: lws-operator}
spec:
  bundle: registry.redhat.io/leader-worker-set/lws-operator-bundle
  version: "1.0"
  namespace: openshift-lws-operator
`

func TestParseFullSpec(t *testing.T) {
	doc := minimal + `  createNamespace: false
  watchNamespaces: [a, b]
  imagePullSecrets: [redhat-pull-secret]
  serviceAccounts: [lws-controller-manager]
  authReaderBinding: true
  exclude: [ConsoleYAMLSample, "console.openshift.io/*", "Secret/some-name"]
  images: {"registry.redhat.io/": "mirror.example.com/rh/"}
  config:
    env: [{name: A, value: b}]
    nodeSelector: {kubernetes.io/os: linux}
  certificateProvider: service-ca
  examples: [LeaderWorkerSetOperator]
  patches:
  - target: {kind: Deployment}
    patch: |-
      - op: add
        path: /spec/replicas
        value: 2
  syncWaves: {crds: -10, crs: 5}
  keepCRDs: false
`
	f, err := Parse("olm-cmp.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Spec
	if err := s.Validate(); err != nil {
		t.Fatalf("valid spec rejected: %v", err)
	}
	if f.Metadata.Name != "lws-operator" || s.Version != "1.0" || s.CreatesNamespace() || s.KeepsCRDs() {
		t.Errorf("decoded wrong: %+v", s)
	}
	if got := s.Config.NodeSelector["kubernetes.io/os"]; got != "linux" {
		t.Errorf("config.nodeSelector = %q", got)
	}
	if len(s.Patches) != 1 || s.Patches[0].Target.Kind != "Deployment" {
		t.Errorf("patches = %+v", s.Patches)
	}
	w := s.SyncWaves.Effective()
	if w.CRDs != -10 || w.RBAC != DefaultWaveRBAC || w.CRs != 5 {
		t.Errorf("waves = %+v", w)
	}
}

func TestDefaults(t *testing.T) {
	f, err := Parse("x", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Spec.CreatesNamespace() || !f.Spec.KeepsCRDs() {
		t.Error("createNamespace and keepCRDs default to true")
	}
}

// The lines of minimal: an appended key is on line 8.
func TestUnknownKeysAreNamed(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{minimal + "  imagePullSecret: [x]\n", `f: line 8: unknown field "spec.imagePullSecret": did you mean imagePullSecrets?`},
		{minimal + "  ImagePullSecrets: [x]\n", `f: line 8: unknown field "spec.ImagePullSecrets": did you mean imagePullSecrets?`},
		{minimal + "  config: {envv: []}\n", `f: line 8: unknown field "spec.config.envv": did you mean env?`},
		{minimal + "  config: {env: [{name: A, valeu: b}]}\n", `f: line 8: unknown field "spec.config.env[0].valeu": did you mean value?`},
		{minimal + "  syncWaves: {crd: 1}\n", `f: line 8: unknown field "spec.syncWaves.crd": did you mean crds?`},
		{minimal + "  syncWaves: {first: 1}\n", `f: line 8: unknown field "spec.syncWaves.first": known fields are crds, crs, operator, rbac, webhooks`},
		{minimal + "  patches: [{patch: x, target: {knd: Deployment}}]\n", `f: line 8: unknown field "spec.patches[0].target.knd": did you mean kind?`},
		{minimal + "  frobnicate: true\n", `f: line 8: unknown field "spec.frobnicate"`},
		{strings.Replace(minimal, "metadata:", "metdata:", 1), `f: line 3: unknown field "metdata": did you mean metadata?`},
	} {
		_, err := Parse("f", []byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("want\n%s\ngot\n%v", tc.want, err)
		}
	}
}

// Type errors in the file's words, with line and field path; YAML that
// cannot be read names its line.
func TestBadYAMLAndTypes(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{minimal + "  watchNamespaces: oops\n", `f: line 8: spec.watchNamespaces: expected a list of strings, got "oops": write it as a list, [oops]`},
		{minimal + "  createNamespace: [a]\n", `f: line 8: spec.createNamespace: expected true or false, got a list`},
		{minimal + "  keepCRDs: maybe\n", `f: line 8: spec.keepCRDs: expected true or false, got "maybe"`},
		{minimal + "  keepCRDs: \"true\"\n", `f: line 8: spec.keepCRDs: expected true or false, got "true"`},
		{minimal + "  syncWaves: {crds: -1.5}\n", `f: line 8: spec.syncWaves.crds: expected a whole number, got "-1.5"`},
		{minimal + "  syncWaves: {crds: \"1\"}\n", `f: line 8: spec.syncWaves.crds: expected a whole number, got "1"`},
		{minimal + "  images: {quay.io/: [a]}\n", `f: line 8: spec.images["quay.io/"]: expected a string, got a list`},
		{minimal + "  config: {resources: {limits: {cpu: lots}}}\n", `f: line 8: spec.config.resources.limits.cpu: expected a quantity such as 500m, 2 or 1Gi, got "lots"`},
		{minimal + "  namespace: x\n", `f: line 8: "spec.namespace" is set twice (lines 7 and 8): remove one`},
		{minimal + "  bundle: [\n", "f: not valid YAML: line 8: did not find expected node content"},
		{minimal + "---\nkind: x\n", "f: line 9: a second YAML document: the file holds one document (remove the --- and what follows)"},
		{"- a\n", `f: line 1: expected a map of fields, got a list`},
	} {
		_, err := Parse("f", []byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("want\n%s\ngot\n%v", tc.want, err)
		}
	}
}

// Every problem of the file comes at once, one per line, in file order:
// unknown keys, type errors, then Validate's problems with the fields that
// decoded (a field that did not decode is not judged again).
func TestEveryProblemAtOnce(t *testing.T) {
	doc := `apiVersion: olm-cmp.dev/v1alpha1
kind: OperatorBundle
spec:
  bundle: ./bundle
  namespace: [a]
  imagePullSecret: [x]
  createNamespace: [a]
  certificateProvider: vault
  syncWaves: {crd: 1}
`
	_, err := Parse("dir/olm-cmp.yaml", []byte(doc))
	want := `dir/olm-cmp.yaml: line 5: spec.namespace: expected a string, got a list
dir/olm-cmp.yaml: line 6: unknown field "spec.imagePullSecret": did you mean imagePullSecrets?
dir/olm-cmp.yaml: line 7: spec.createNamespace: expected true or false, got a list
dir/olm-cmp.yaml: line 9: unknown field "spec.syncWaves.crd": did you mean crds?
dir/olm-cmp.yaml: line 8: spec.certificateProvider "vault": must be one of cert-manager, service-ca, none`
	if err == nil || err.Error() != want {
		t.Fatalf("want\n%s\ngot\n%v", want, err)
	}
	// A caller that changes the spec (flags, parameters) judges the result.
	var fe *FileError
	if !errors.As(err, &fe) || fe.File == nil {
		t.Fatalf("want a *FileError holding the decoded file, got %T", err)
	}
	fe.File.Spec.CertificateProvider = "none"
	fe.File.Spec.Exclude = []string{""}
	fe.Revalidate(&fe.File.Spec)
	if got := err.Error(); strings.Contains(got, "vault") || !strings.HasSuffix(got, "\nspec.exclude[0]: empty selector: use [group/]Kind[/name], e.g. ConsoleYAMLSample or console.openshift.io/*") {
		t.Errorf("after Revalidate:\n%s", got)
	}
	// Not an olm-cmp.yaml at all: the spec's problems would be noise.
	_, err = Parse("f", []byte("apiVersion: v1\nkind: ConfigMap\nspec: {}\n"))
	if want := `f: line 2: kind: an olm-cmp spec starts with apiVersion: olm-cmp.dev/v1alpha1 and kind: OperatorBundle, got "v1" and "ConfigMap"`; err == nil || err.Error() != want {
		t.Errorf("want %s, got %v", want, err)
	}
}

// A string field takes the scalar as written: YAML 1.1 reads y, no, on and
// off as booleans and 1.10 as the float 1.1. A true-or-false field still
// takes the YAML 1.1 words unquoted, as it did.
func TestScalarsAsWritten(t *testing.T) {
	for _, word := range []string{"y", "n", "yes", "no", "on", "off", "Y", "NO", "True"} {
		doc := strings.Replace(minimal, "namespace: openshift-lws-operator", "namespace: "+word, 1)
		f, err := Parse("f", []byte(doc))
		if err != nil {
			t.Fatalf("namespace: %s: %v", word, err)
		}
		if f.Spec.Namespace != word {
			t.Errorf("namespace: %s decoded as %q", word, f.Spec.Namespace)
		}
	}
	doc := strings.Replace(minimal, `version: "1.0"`, "version: 1.10", 1) + "  watchNamespaces: [on, 007]\n  images: {quay.io/: 1.50}\n  config: {env: [{name: A, value: off}]}\n"
	f, err := Parse("f", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Spec
	if s.Version != "1.10" || strings.Join(s.WatchNamespaces, ",") != "on,007" || s.Images["quay.io/"] != "1.50" || s.Config.Env[0].Value != "off" {
		t.Errorf("decoded %q %q %q %q", s.Version, s.WatchNamespaces, s.Images, s.Config.Env[0].Value)
	}
	for word, want := range map[string]bool{"yes": true, "on": true, "y": true, "no": false, "off": false, "false": false, "TRUE": true} {
		f, err := Parse("f", []byte(minimal+"  createNamespace: "+word+"\n"))
		if err != nil || f.Spec.CreatesNamespace() != want {
			t.Errorf("createNamespace: %s: got %v, %v", word, f, err)
		}
	}
}

// YAML anchors, aliases and merge keys decode as the YAML library would;
// a written key wins over a merged one.
func TestAnchorsAndMerges(t *testing.T) {
	doc := minimal + "  exclude: &ex [ConsoleYAMLSample]\n  examples: *ex\n  syncWaves:\n    <<: {crds: -9, rbac: -8}\n    crds: -7\n"
	f, err := Parse("f", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	w := f.Spec.SyncWaves.Effective()
	if f.Spec.Examples[0] != "ConsoleYAMLSample" || w.CRDs != -7 || w.RBAC != -8 {
		t.Errorf("decoded examples %q, waves %+v", f.Spec.Examples, w)
	}
	// The hostile-input limits hold before any decoding.
	_, err = Parse("f", []byte(minimal+"  exclude: &l [*l]\n"))
	if err == nil || !strings.Contains(err.Error(), "endless loop") {
		t.Errorf("alias cycle: %v", err)
	}
}

func TestWrongKind(t *testing.T) {
	_, err := Parse("f", []byte(strings.Replace(minimal, "OperatorBundle", "Bundle", 1)))
	want := `f: line 2: kind: an olm-cmp spec starts with apiVersion: olm-cmp.dev/v1alpha1 and kind: OperatorBundle, got "olm-cmp.dev/v1alpha1" and "Bundle"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v", err)
	}
}

func TestValidateNamesEveryField(t *testing.T) {
	s := Spec{
		Namespace:           "Bad_NS",
		WatchNamespaces:     []string{"ok", "no/slash"},
		ImagePullSecrets:    []string{"UPPER"},
		CertificateProvider: "vault",
		Exclude:             []string{"a/b/c/d", ""},
		Images:              map[string]string{"quay.io/": ""},
		SyncWaves:           SyncWaves{Operator: ptr(-10)},
	}
	err := s.Validate()
	if err == nil {
		t.Fatal("invalid spec accepted")
	}
	for _, want := range []string{
		"spec.bundle is required",
		`spec.namespace "Bad_NS"`,
		`spec.watchNamespaces[1] "no/slash"`,
		`spec.imagePullSecrets[0] "UPPER"`,
		`spec.certificateProvider "vault"`,
		"spec.exclude[0]", "spec.exclude[1]",
		"spec.images",
		"spec.syncWaves: rbac (-3) must be lower than operator (-10)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestNormalizedIgnoresListOrder(t *testing.T) {
	a := Spec{Bundle: "x", Namespace: "n", ImagePullSecrets: []string{"b", "a", "a"}}
	b := Spec{Bundle: "x", Namespace: "n", ImagePullSecrets: []string{"a", "b"}}
	if string(a.Normalized()) != string(b.Normalized()) {
		t.Errorf("%s != %s", a.Normalized(), b.Normalized())
	}
	c := Spec{Bundle: "x", Namespace: "other"}
	if string(a.Normalized()) == string(c.Normalized()) {
		t.Error("different specs normalized equal")
	}
}

func ptr(i int) *int { return &i }

func TestCatalogSpec(t *testing.T) {
	ok := []Spec{
		{Catalog: "./catalog", Package: "widget", Namespace: "n"},
		{Catalog: "quay.io/org/catalog:latest", Package: "widget", Channel: "stable", Version: "1.2.x", Namespace: "n"},
		{Catalog: "./catalog", Package: "widget", Version: ">=1.0.0 <2", Namespace: "n"},
		{Catalog: "./catalog", Package: "widget", Version: "1.2.3", Channel: "stable,fast", Namespace: "n"},
	}
	for _, s := range ok {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v rejected: %v", s, err)
		}
	}
	for _, tc := range []struct {
		s     Spec
		wants []string
	}{
		{Spec{Catalog: "./c", Bundle: "quay.io/x/b:1", Package: "p", Namespace: "n"}, []string{"spec.bundle and spec.catalog are both set"}},
		{Spec{Catalog: "./c", Namespace: "n"}, []string{"spec.package is required with spec.catalog"}},
		{Spec{Catalog: "./c", Package: "a b", Namespace: "n"}, []string{`spec.package "a b": not a package name`}},
		{Spec{Catalog: "./c", Package: "p", Version: "one.two", Namespace: "n"}, []string{`spec.version "one.two": not a version range`}},
		{Spec{Catalog: "  ", Package: "p", Namespace: "n"}, []string{"spec.catalog is empty"}},
		{Spec{Bundle: "quay.io/x/b:1", Package: "p", Channel: "stable", Namespace: "n"}, []string{
			`spec.package "p" is set without spec.catalog`, `spec.channel "stable" is set without spec.catalog`}},
		{Spec{Package: "p", Namespace: "n"}, []string{"spec.bundle is required", "spec.catalog", `spec.package "p" is set without spec.catalog`}},
	} {
		err := tc.s.Validate()
		if err == nil {
			t.Errorf("%+v accepted", tc.s)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error lacks %q:\n%v", tc.s, w, err)
			}
		}
	}
}

func TestParseCatalogSpec(t *testing.T) {
	doc := `apiVersion: olm-cmp.dev/v1alpha1
kind: OperatorBundle
spec:
  catalog: ./catalog
  package: widget
  channel: stable
  version: ">=1.0.0 <2"
  namespace: widget-system
`
	f, err := Parse("f", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Spec
	if s.Catalog != "./catalog" || s.Package != "widget" || s.Channel != "stable" || s.Version != ">=1.0.0 <2" {
		t.Errorf("decoded %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	// Case-sensitive, like every other key.
	if _, err := Parse("f", []byte(strings.Replace(doc, "package:", "Package:", 1))); err == nil || !strings.Contains(err.Error(), `unknown field "spec.Package"`) {
		t.Errorf("Package: accepted or badly reported: %v", err)
	}
}

func TestCredentialInReferenceRefusedUnrepeated(t *testing.T) {
	const secret = "CANARY-pass"
	for _, ref := range []string{"user:" + secret + "@quay.io/org/bundle:v1", "https://user:" + secret + "@quay.io/org/bundle:v1", secret + "@registry.example.com/b@sha256:" + strings.Repeat("a", 64)} {
		for _, field := range []string{"bundle", "catalog"} {
			s := Spec{Namespace: "ns", Package: "p"}
			if field == "bundle" {
				s.Bundle = ref
			} else {
				s.Catalog = ref
			}
			if r := Redact(ref); strings.Contains(r, secret) || !strings.Contains(r, "***@") {
				t.Errorf("Redact(%q) = %q", ref, r)
			}
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), "spec."+field+" holds a credential") || strings.Contains(err.Error(), secret) {
				t.Errorf("%s %q: got %v", field, ref, err)
			}
		}
	}
	// Digests and paths are not credentials.
	for _, ref := range []string{"busybox@sha256:" + strings.Repeat("a", 64), "quay.io/org/b@sha256:" + strings.Repeat("a", 64), "quay.io/org/b:v1@sha256:" + strings.Repeat("a", 64), "./bundle", "../x@y/bundle"} {
		if hasUserinfo(ref) || Redact(ref) != ref {
			t.Errorf("%q taken for a credential", ref)
		}
	}
}

func TestValidateUpgradeFrom(t *testing.T) {
	for _, tc := range []struct {
		v       string
		catalog bool
		want    string // "" = valid, else part of the error
	}{
		{v: "1.2.3"}, {v: "v1.2.3"}, {v: "1.2.3-rc.1"},
		// an image bundle's tag need not be semver
		{v: "1.0"}, {v: "latest"}, {v: "v4.17_build-2"},
		{v: "1.2.3+build", want: "not an image tag"}, {v: ">=1.0.0", want: "not an image tag"},
		{v: "x:y", want: "not an image tag"}, {v: "a/b", want: "not an image tag"},
		{v: "sha256:" + strings.Repeat("a", 64), want: "not an image tag"}, {v: strings.Repeat("a", 129), want: "not an image tag"},
		// a catalog's versions are semver
		{v: "1.2.3", catalog: true}, {v: "v1.2.3", catalog: true},
		{v: "1.0", catalog: true, want: "not a version"}, {v: "latest", catalog: true, want: "not a version"},
		{v: "1.2.3+build", catalog: true, want: "not a version"},
	} {
		s := Spec{Bundle: "quay.io/x/y", Namespace: "n", UpgradeFrom: tc.v}
		if tc.catalog {
			s = Spec{Catalog: "quay.io/x/catalog:v1", Package: "p", Namespace: "n", UpgradeFrom: tc.v}
		}
		err := s.Validate()
		if tc.want == "" && err != nil {
			t.Errorf("upgradeFrom %q (catalog %t) refused: %v", tc.v, tc.catalog, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), `spec.upgradeFrom `+echo.Quote(tc.v)+`: `+tc.want)) {
			t.Errorf("upgradeFrom %q (catalog %t): got %v, want a refusal saying %q", tc.v, tc.catalog, err, tc.want)
		}
	}
}

func TestValidateClusterAPIsAndAccept(t *testing.T) {
	cases := []struct {
		s    Spec
		want string // "" = valid
	}{
		{Spec{ClusterAPIs: []string{"cert-manager.io/v1", "monitoring.coreos.com"}, Accept: []string{"api:route.openshift.io", "image:*", "openshift"}}, ""},
		{Spec{ClusterAPIs: []string{"cert-manager.io/"}}, `spec.clusterAPIs[0] "cert-manager.io/"`},
		{Spec{ClusterAPIs: []string{"Not A Group/v1"}}, `spec.clusterAPIs[0] "Not A Group/v1": not an API group`},
		// A group without a dot is none a CRD can define: the name of a
		// project, not its API group.
		{Spec{ClusterAPIs: []string{"cert-manager"}}, `spec.clusterAPIs[0] "cert-manager": not an API group: a CRD's group holds a dot (cert-manager.io, monitoring.coreos.com): use group/version, e.g. cert-manager.io/v1`},
		{Spec{ClusterAPIs: []string{"monitoring/v1"}}, `spec.clusterAPIs[0] "monitoring/v1": not an API group: a CRD's group holds a dot`},
		{Spec{ClusterAPIs: []string{"apps/v1", "batch", "policy/v1"}}, ""},
		{Spec{Accept: []string{"apis:route.openshift.io"}}, `spec.accept[0] "apis:route.openshift.io": use category:subject`},
		{Spec{Accept: []string{"api:"}}, `spec.accept[0] "api:": empty subject`},
		{Spec{Accept: []string{"api:" + strings.Repeat("*", 1_040_000)}}, "spec.accept[0]: 1040004 characters, at most 256: shorten it with * globs"},
		{Spec{Accept: []string{"api:" + strings.Repeat("a", 252)}}, ""},
		{Spec{Accept: slices.Repeat([]string{"api:x"}, 257)}, "spec.accept: 257 entries, at most 256"},
		{Spec{Accept: slices.Repeat([]string{"api:x"}, 256)}, ""},
	}
	for i, c := range cases {
		c.s.Bundle, c.s.Namespace = "quay.io/x/b:1", "ns"
		err := c.s.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			// Not the spec nor the whole error: some entries are huge.
			got := ""
			if err != nil {
				got = err.Error()[:min(len(err.Error()), 300)]
			}
			t.Errorf("case %d: got %q, want %q", i, got, c.want)
		}
	}
}

func TestCertProvider(t *testing.T) {
	for _, tc := range []struct {
		set         string
		hasWebhooks bool
		want        string
	}{
		{"", false, CertProviderNone},
		{"", true, CertProviderCertManager},
		{CertProviderServiceCA, true, CertProviderServiceCA},
		{CertProviderNone, true, CertProviderNone},
		{CertProviderCertManager, false, CertProviderCertManager},
	} {
		s := Spec{CertificateProvider: tc.set}
		if got := s.CertProvider(tc.hasWebhooks); got != tc.want {
			t.Errorf("certificateProvider %q, webhooks %v: got %q, want %q", tc.set, tc.hasWebhooks, got, tc.want)
		}
	}
}

func TestExcludeFiles(t *testing.T) {
	base := Spec{Bundle: "./bundle", Namespace: "n"}
	for _, ok := range []string{"manifests/broken.yaml", "manifests/a b.json"} {
		s := base
		s.ExcludeFiles = []string{ok}
		if err := s.Validate(); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for f, want := range map[string]string{
		"broken.yaml":               `spec.excludeFiles[0] "broken.yaml": name a file of the bundle's manifests/ directory as errors name it, e.g. manifests/broken.yaml`,
		"metadata/annotations.yaml": `spec.excludeFiles[0] "metadata/annotations.yaml": only files of the bundle's manifests/ directory can be skipped`,
		// The example is the entry's own file, not another's.
		"noapi.yaml":             `spec.excludeFiles[0] "noapi.yaml": name a file of the bundle's manifests/ directory as errors name it, e.g. manifests/noapi.yaml`,
		"./manifests/noapi.yaml": `as errors name it, e.g. manifests/noapi.yaml`,
		"manifests//noapi.yaml":  `name one file directly in manifests/ (a bundle has no subdirectories there), e.g. manifests/noapi.yaml`,
		"manifests/":             "name one file directly in manifests/",
		"manifests/sub/x.yaml":   "name one file directly in manifests/",
		"manifests/../x.yaml":    "name one file directly in manifests/",
		"manifests/.hidden.yaml": "never read",
		"manifests/*.yaml":       "without globs",
	} {
		s := base
		s.ExcludeFiles = []string{f}
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", f, err, want)
		}
	}
	s := base
	s.ExcludeFiles = make([]string, MaxExcludeFiles+1)
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "spec.excludeFiles: 65 entries, at most 64") {
		t.Errorf("too many: %v", err)
	}
	// The cache key sees the field, and not its order.
	a, b, c := base, base, base
	a.ExcludeFiles = []string{"manifests/a.yaml", "manifests/b.yaml"}
	b.ExcludeFiles = []string{"manifests/b.yaml", "manifests/a.yaml"}
	if string(a.Normalized()) != string(b.Normalized()) || string(a.Normalized()) == string(c.Normalized()) {
		t.Errorf("normalized: %s / %s / %s", a.Normalized(), b.Normalized(), c.Normalized())
	}
	// It decodes from the file and from a plugin parameter.
	f, err := Parse("f", []byte(minimal+"  excludeFiles: [manifests/broken.yaml]\n"))
	if err != nil || !slices.Equal(f.Spec.ExcludeFiles, []string{"manifests/broken.yaml"}) {
		t.Errorf("parsed %v, %v", f, err)
	}
	if p, ok := FindParam("excludeFiles"); !ok || p.Collection != CollectionArray {
		t.Errorf("parameter %+v %v", p, ok)
	}
}

func TestValidateDigest(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct {
		s   Spec
		err string
	}{
		{Spec{Bundle: "quay.io/a/b", Version: "1.0", Digest: d, Namespace: "ns"}, ""},
		{Spec{Bundle: "quay.io/a/b@" + d, Digest: d, Namespace: "ns"}, ""},
		{Spec{Catalog: "quay.io/a/c:v4", Package: "p", Digest: d, Namespace: "ns"}, ""},
		{Spec{Bundle: "quay.io/a/b", Digest: "abc", Namespace: "ns"}, `spec.digest "abc": not an image digest: write sha256: and 64 hexadecimal digits, as olm-cmp resolve prints it`},
		{Spec{Bundle: "quay.io/a/b", Digest: "quay.io/a/b@" + d, Namespace: "ns"}, "not an image digest"},
		{Spec{Bundle: "quay.io/a/b@sha256:" + strings.Repeat("b", 64), Digest: d, Namespace: "ns"}, "and the digest of spec.bundle"},
	} {
		err := tc.s.Validate()
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.err)
		}
	}
	if _, ok := FindParam("digest"); !ok {
		t.Error("digest is not a plugin parameter")
	}
}

func TestExtraManifests(t *testing.T) {
	base := Spec{Bundle: "./bundle", Namespace: "n"}
	ok := base
	ok.ExtraManifests = &ExtraManifests{Include: []string{"*-cr.yaml", "crs.json", "[ab].yml"}, Exclude: []string{"out.yaml"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("refused: %v", err)
	}
	for g, want := range map[string]string{
		"":             `spec.extraManifests.include[0] "": empty: name a file beside olm-cmp.yaml`,
		"crs/*.yaml":   `spec.extraManifests.include[0] "crs/*.yaml": a file name without '/': extra manifests are read from the directory of olm-cmp.yaml only`,
		`crs\a.yaml`:   "a file name without '/'",
		"[a-.yaml":     "not a valid glob (use *, ? and [a-z])",
		"olm-cmp.yaml": "olm-cmp.yaml is the spec, never an extra manifest",
	} {
		s := base
		s.ExtraManifests = &ExtraManifests{Include: []string{g}}
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", g, err, want)
		}
	}
	s := base
	s.ExtraManifests = &ExtraManifests{Exclude: make([]string, MaxExtraManifestGlobs+1)}
	if err := s.Validate(); err == nil || err.Error() != "spec.extraManifests.exclude: 65 entries, at most 64" {
		t.Errorf("too many: %v", err)
	}
	// The cache key sees the field, and not its order.
	a, b, c := base, base, base
	a.ExtraManifests = &ExtraManifests{Include: []string{"a.yaml", "b.yaml"}}
	b.ExtraManifests = &ExtraManifests{Include: []string{"b.yaml", "a.yaml", "a.yaml"}}
	if string(a.Normalized()) != string(b.Normalized()) || string(a.Normalized()) == string(c.Normalized()) {
		t.Errorf("normalized: %s / %s / %s", a.Normalized(), b.Normalized(), c.Normalized())
	}
	if b.ExtraManifests.Include[0] != "b.yaml" {
		t.Error("Normalized changed the spec it normalizes")
	}
	// It decodes from the file, its typos named, and from a plugin parameter.
	f, err := Parse("f", []byte(minimal+"  extraManifests:\n    exclude: [out.yaml]\n"))
	if err != nil || f.Spec.ExtraManifests == nil || !slices.Equal(f.Spec.ExtraManifests.Exclude, []string{"out.yaml"}) {
		t.Errorf("parsed %+v, %v", f, err)
	}
	if _, err := Parse("f", []byte(minimal+"  extraManifests:\n    excludes: [out.yaml]\n")); err == nil || !strings.Contains(err.Error(), "spec.extraManifests.excludes") {
		t.Errorf("a typo: %v", err)
	}
	p, found := FindParam("extraManifests")
	if !found || !p.Structured {
		t.Fatalf("parameter %+v %v", p, found)
	}
	v := "{include: [crs.yaml]}"
	got, err := ApplyOverrides(base, []Override{{Name: "extraManifests", Source: "parameter", String: &v}})
	if err != nil || got.ExtraManifests == nil || !slices.Equal(got.ExtraManifests.Include, []string{"crs.yaml"}) {
		t.Errorf("parameter: %+v, %v", got.ExtraManifests, err)
	}
}

func TestValidateAcknowledge(t *testing.T) {
	ok := Acknowledgement{Rule: "existingFieldRemoval", CRD: "lokistacks.loki.grafana.com", Version: "v1", Path: ".status.networkPolicyRuleSet", Reason: "judged"}
	with := func(edit func(*Acknowledgement)) []Acknowledgement {
		a := ok
		edit(&a)
		return []Acknowledgement{a}
	}
	cases := []struct {
		acks []Acknowledgement
		want string // "" = valid; else the whole error
	}{
		{[]Acknowledgement{ok}, ""},
		{[]Acknowledgement{{Rule: "upgradeEdge", Reason: "we go down on purpose"}}, ""},
		{with(func(a *Acknowledgement) { a.Reason = "" }), "spec.acknowledge[0]: existingFieldRemoval lokistacks.loki.grafana.com v1 .status.networkPolicyRuleSet: reason is missing: say why this finding is safe for your cluster (it is shown with the finding)"},
		{with(func(a *Acknowledgement) { a.Rule = "" }), "spec.acknowledge[0]: rule is missing: copy rule, crd, version and path from the finding (olm-cmp diff -o json prints them)"},
		{with(func(a *Acknowledgement) { a.Rule = "2x" }), `spec.acknowledge[0]: rule "2x": not a rule name: copy it from the finding, e.g. existingFieldRemoval`},
		{with(func(a *Acknowledgement) { a.Path = "status.x" }), `spec.acknowledge[0]: path "status.x": a JSON path as the finding prints it, starting with '.', e.g. .status.conditions`},
		{with(func(a *Acknowledgement) { a.Reason = "ok\x1b[2J" }), `spec.acknowledge[0]: reason "ok\x1b[2J": no control characters or leading or trailing spaces`},
		{with(func(a *Acknowledgement) { a.CRD = " x" }), `spec.acknowledge[0]: crd " x": no control characters or leading or trailing spaces`},
		{with(func(a *Acknowledgement) { a.Path = "." + strings.Repeat("a", 2_000_000) }), "spec.acknowledge[0]: path: 2000001 characters, at most 1024"},
		{with(func(a *Acknowledgement) { a.Reason = strings.Repeat("r", 513) }), "spec.acknowledge[0]: reason: 513 characters, at most 512"},
		{slices.Repeat([]Acknowledgement{ok}, 64), ""},
		{slices.Repeat([]Acknowledgement{ok}, 100_000), "spec.acknowledge: 100000 entries, at most 64: an acknowledgement names one finding; fix the bundle instead when there are this many"},
	}
	for i, c := range cases {
		s := Spec{Bundle: "quay.io/x/b:1", Namespace: "ns", Acknowledge: c.acks}
		err := s.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("case %d: got %.300q, want %q", i, got, c.want)
		}
	}

	// Normalized: the entries are a set (order and repeats change nothing),
	// and every field counts.
	other := Acknowledgement{Rule: "upgradeEdge", Reason: "r"}
	a := Spec{Acknowledge: []Acknowledgement{ok, other}}
	b := Spec{Acknowledge: []Acknowledgement{other, ok, other}}
	c := Spec{Acknowledge: with(func(a *Acknowledgement) { a.Reason = "another reason" })}
	if string(a.Normalized()) != string(b.Normalized()) || string(a.Normalized()) == string(c.Normalized()) || !strings.Contains(string(a.Normalized()), `"acknowledge":[{"rule":"existingFieldRemoval"`) {
		t.Errorf("Normalized:\n%s\n%s\n%s", a.Normalized(), b.Normalized(), c.Normalized())
	}
	if len(b.Acknowledge) != 3 {
		t.Error("Normalized changed the spec's own list")
	}
}

// TestUpgradeConstraintPolicy: OLM v1's two values, as it spells them; a
// near miss is refused with the value it resembles; CatalogProvided is the
// default, so writing it out keeps the cache key, and SelfCertified changes
// it.
func TestUpgradeConstraintPolicy(t *testing.T) {
	const use = "not a policy: use CatalogProvided (the default: the upgrade must follow the catalog's, or the CSVs', replaces, skips or olm.skipRange) or SelfCertified (any version: you have checked the upgrade yourself), as OLM v1 spells them"
	for _, tc := range []struct {
		v, want, policy string // want: "" valid, else the whole error
	}{
		{v: "", policy: UpgradeCatalogProvided},
		{v: "CatalogProvided", policy: UpgradeCatalogProvided},
		{v: "SelfCertified", policy: UpgradeSelfCertified},
		{v: "selfcertified", want: `spec.upgradeConstraintPolicy "selfcertified": ` + use + "; did you mean SelfCertified?"},
		{v: "SelfCertify", want: `spec.upgradeConstraintPolicy "SelfCertify": ` + use + "; did you mean SelfCertified?"},
		{v: "CatalogProvider", want: `spec.upgradeConstraintPolicy "CatalogProvider": ` + use + "; did you mean CatalogProvided?"},
		{v: "Strict", want: `spec.upgradeConstraintPolicy "Strict": ` + use},
		{v: strings.Repeat("SelfCertified", 10_000), want: `spec.upgradeConstraintPolicy "` + strings.Repeat("SelfCertified", 10_000)[:120] + `"… (130000 bytes): ` + use},
	} {
		s := Spec{Bundle: "quay.io/x/b:1", Namespace: "ns", UpgradeFrom: "1.0.0", UpgradeConstraintPolicy: tc.v}
		err := s.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%.40q: got %.400q, want %.400q", tc.v, got, tc.want)
		}
		if tc.want == "" && s.UpgradePolicy() != tc.policy {
			t.Errorf("%q: policy %s, want %s", tc.v, s.UpgradePolicy(), tc.policy)
		}
	}

	unset := Spec{Bundle: "quay.io/x/b:1", Namespace: "ns", UpgradeFrom: "1.0.0"}
	provided, self := unset, unset
	provided.UpgradeConstraintPolicy, self.UpgradeConstraintPolicy = UpgradeCatalogProvided, UpgradeSelfCertified
	if string(unset.Normalized()) != string(provided.Normalized()) || string(unset.Normalized()) == string(self.Normalized()) ||
		!strings.Contains(string(self.Normalized()), `"upgradeConstraintPolicy":"SelfCertified"`) {
		t.Errorf("Normalized:\n%s\n%s\n%s", unset.Normalized(), provided.Normalized(), self.Normalized())
	}
	if provided.UpgradeConstraintPolicy != UpgradeCatalogProvided {
		t.Error("Normalized changed the spec it normalizes")
	}

	// Strict decoding names the field's path, with a did-you-mean.
	_, err := Parse(FileName, []byte(minimal+"  upgradeConstraintPolicyy: SelfCertified\n"))
	if err == nil || !strings.Contains(err.Error(), "did you mean upgradeConstraintPolicy?") {
		t.Errorf("misspelt key: %v", err)
	}
	f, err := Parse(FileName, []byte(minimal+"  upgradeFrom: \"0.9\"\n  upgradeConstraintPolicy: SelfCertified\n"))
	if err != nil || f.Spec.UpgradePolicy() != UpgradeSelfCertified {
		t.Errorf("parsed %+v, %v; want SelfCertified", f, err)
	}
}
