package spec

import (
	"strings"
	"testing"
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

func TestUnknownKeysAreNamed(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{minimal + "  imagePullSecret: [x]\n", `unknown field "spec.imagePullSecret"`},
		{minimal + "  config: {envv: []}\n", `unknown field "spec.config.envv"`},
		{minimal + "  syncWaves: {crd: 1}\n", `unknown field "spec.syncWaves.crd"`},
		{strings.Replace(minimal, "metadata:", "metdata:", 1), `unknown field "metdata"`},
	} {
		_, err := Parse("dir/olm-cmp.yaml", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dir/olm-cmp.yaml: ") {
			t.Errorf("want error containing %q with the file name, got %v", tc.want, err)
		}
	}
}

func TestWrongKind(t *testing.T) {
	_, err := Parse("f", []byte(strings.Replace(minimal, "OperatorBundle", "Bundle", 1)))
	if err == nil || !strings.Contains(err.Error(), "olm-cmp.dev/v1alpha1/OperatorBundle") {
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

func TestBadYAMLAndTypes(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{minimal + "  watchNamespaces: oops\n", "watchNamespaces"},
		{minimal + "  namespace: x\n", `key "namespace" already set`},
		{minimal + "  bundle: [\n", "not valid YAML"},
	} {
		_, err := Parse("f", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want error containing %q, got %v", tc.want, err)
		}
	}
}

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
		v  string
		ok bool
	}{
		{"1.2.3", true}, {"v1.2.3", true}, {"1.2.3-rc.1", true},
		{"1.2", false}, {">=1.0.0", false}, {"latest", false}, {"1.2.3+build", false},
	} {
		s := Spec{Bundle: "quay.io/x/y", Namespace: "n", UpgradeFrom: tc.v}
		err := s.Validate()
		if tc.ok && err != nil {
			t.Errorf("upgradeFrom %q refused: %v", tc.v, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), `spec.upgradeFrom "`+tc.v+`": not a version`)) {
			t.Errorf("upgradeFrom %q: got %v, want a clear refusal", tc.v, err)
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
		{Spec{Accept: []string{"apis:route.openshift.io"}}, `spec.accept[0] "apis:route.openshift.io": use category:subject`},
		{Spec{Accept: []string{"api:"}}, `spec.accept[0] "api:": empty subject`},
	}
	for _, c := range cases {
		c.s.Bundle, c.s.Namespace = "quay.io/x/b:1", "ns"
		err := c.s.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: got %v, want %q", c.s, err, c.want)
		}
	}
}
