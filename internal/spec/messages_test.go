package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The first-hour mistakes of issue 18, each with its exact message: the
// file, the line, the field and the fix.
func TestFirstHourMessages(t *testing.T) {
	const head = "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"tab", head + "\tnamespace: x\n",
			`f: not valid YAML: line 5: the line is indented with a tab: YAML indents with spaces only; replace the tab with spaces`},
		{"over-indented key", head + "    namespace: x\n",
			`f: not valid YAML: line 5: "namespace" is indented deeper (4 spaces) than "bundle" on line 4 (2 spaces), which already has a value: indent "namespace" by 2 spaces, as "bundle"`},
		{"value with colon", head + "  namespace: a: b\n",
			`f: not valid YAML: line 5: the value holds ": ", which YAML reads as another key: put the value in quotes`},
		{"under the top level", head + "namespace: x\n",
			`f: line 5: unknown field "namespace": namespace belongs under spec (spec.namespace): indent it under spec`},
		{"under syncWaves", head + "  syncWaves:\n    crds: -5\n    namespace: x\n",
			`f: line 7: unknown field "spec.syncWaves.namespace": namespace belongs to spec (spec.namespace), not to spec.syncWaves: indent it as far as syncWaves`},
		{"env beside config", head + "  namespace: x\n  env: []\n",
			`f: line 6: unknown field "spec.env": env belongs under spec.config (spec.config.env): indent it under config`},
		{"metadata name under spec's parent", "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nname: x\nspec:\n  bundle: ./b\n  namespace: x\n",
			`f: line 3: unknown field "name": name belongs under metadata (metadata.name): indent it under metadata`},
		{"target beside patches", head + "  namespace: x\n  patches:\n  target: {kind: Deployment}\n",
			`f: line 7: unknown field "spec.target": target belongs in an item of the list spec.patches (spec.patches.target): indent it under patches, as "- target: ..."`},
		{"kind under spec", head + "  namespace: x\n  kind: OperatorBundle\n",
			`f: line 6: unknown field "spec.kind": kind is a top-level field, not one of spec: indent it as far as spec`},
		{"targetNamespaces", head + "  namespace: x\n  targetNamespaces: [x]\n",
			`f: line 6: unknown field "spec.targetNamespaces": OLM's OperatorGroup field is spec.watchNamespaces here (a list; leave it out to watch all namespaces)`},
		{"installMode", head + "  namespace: x\n  installMode: OwnNamespace\n",
			`f: line 6: unknown field "spec.installMode": olm-cmp picks the install mode from spec.watchNamespaces: leave it out for AllNamespaces, [the install namespace] for OwnNamespace, one other namespace for SingleNamespace`},
		{"startingCSV", head + "  namespace: x\n  startingCSV: x.v1\n",
			`f: line 6: unknown field "spec.startingCSV": olm-cmp renders one bundle: name its version with spec.version (the image tag, or with spec.catalog a version range such as 1.2.x)`},
		{"installPlanApproval", head + "  namespace: x\n  installPlanApproval: Manual\n",
			`f: line 6: unknown field "spec.installPlanApproval": olm-cmp has no install plans (an Argo CD sync is the approval): remove it, and pin the bundle with spec.version and spec.digest (olm-cmp resolve --write)`},
		{"source", head + "  namespace: x\n  source: redhat-operators\n",
			`f: line 6: unknown field "spec.source": a Subscription's CatalogSource is spec.catalog here: the catalog image itself (or a ./directory), with spec.package`},
		{"sourceNamespace", head + "  namespace: x\n  sourceNamespace: openshift-marketplace\n",
			`f: line 6: unknown field "spec.sourceNamespace": olm-cmp reads the catalog image named by spec.catalog directly: remove it`},
		{"subscription name", head + "  namespace: x\n  name: lws-operator\n",
			`f: line 6: unknown field "spec.name": a Subscription's package name is spec.package here (with spec.catalog); the operator's own name goes in metadata.name`},
		{"channel on a bundle", head + "  namespace: x\n  channel: stable\n",
			`f: line 6: spec.channel "stable" is set without spec.catalog: a channel is looked up in a catalog; set spec.catalog and spec.package, or remove spec.channel and name the bundle's version with spec.version (its image tag)`},
		{"namespace with capitals", head + "  namespace: MyNS\n",
			`f: line 5: spec.namespace "MyNS": not a valid namespace name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters, e.g. "myns"`},
		{"pull secret name", head + "  namespace: x\n  imagePullSecrets: [ok, Bad_Name]\n",
			`f: line 6: spec.imagePullSecrets[1] "Bad_Name": not a valid name: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters, e.g. "bad-name"`},
		{"certificate provider", head + "  namespace: x\n  certificateProvider: vault\n",
			`f: line 6: spec.certificateProvider "vault": must be one of cert-manager, service-ca, none`},
		{"subscription kind", "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nspec:\n  name: x\n",
			`f: line 2: kind: an olm-cmp spec starts with apiVersion: olm-cmp.dev/v1alpha1 and kind: OperatorBundle, got "operators.coreos.com/v1alpha1" and "Subscription": an OLM Subscription is not an olm-cmp spec; write kind: OperatorBundle and name the bundle with spec.bundle, or spec.catalog and spec.package (docs/spec.md)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("f", []byte(tc.doc))
			if err == nil && f != nil {
				err = f.Validate(&f.Spec)
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("want\n%s\ngot\n%v", tc.want, err)
			}
			if err != nil && strings.Contains(err.Error(), "regex") {
				t.Errorf("a raw regular expression: %v", err)
			}
		})
	}
}

// A value an override replaced is not the file's: its message names no
// line of the file.
func TestValidateLineOnlyForFileValues(t *testing.T) {
	f, err := Parse("f", []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./b\n  namespace: ok\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Spec
	s.Namespace = "Not_OK"
	err = f.Validate(&s)
	want := `spec.namespace "Not_OK": not a valid namespace name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters, e.g. "not-ok"`
	if err == nil || err.Error() != want {
		t.Errorf("want\n%s\ngot\n%v", want, err)
	}
}

// olm-cmp.yml is not read (the plugin discovers olm-cmp.yaml only) but
// named, with the fix.
func TestLoadSuggestsYml(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "olm-cmp.yml"), []byte("kind: OperatorBundle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	want := "olm-cmp.yaml not found in " + dir + ", but olm-cmp.yml is there: rename it to olm-cmp.yaml (olm-cmp and its Argo CD plugin look for that name only)"
	if err == nil || err.Error() != want || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("want\n%s\ngot\n%v", want, err)
	}
	os.Remove(filepath.Join(dir, "olm-cmp.yml"))
	if _, err := Load(dir); err == nil || strings.Contains(err.Error(), "rename") {
		t.Errorf("empty directory: %v", err)
	}
}

// A render's error about a spec field names the field's line, unless an
// override replaced the value; errors.Is sees the original.
func TestLocate(t *testing.T) {
	f, err := Parse("f", []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./b\n  namespace: ok\n  patches:\n  - path: p.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := errors.New("patches[0]: path \"p.yaml\": no such file\nspec.bundle \"./b\": not found\nstrict: 2 findings")
	got := f.Locate(base, &f.Spec)
	want := "f: line 7: patches[0]: path \"p.yaml\": no such file\nf: line 4: spec.bundle \"./b\": not found\nstrict: 2 findings"
	if got.Error() != want || !errors.Is(got, base) {
		t.Errorf("want\n%s\ngot\n%v", want, got)
	}
	s := f.Spec
	s.Bundle = "./other"
	if got := f.Locate(errors.New(`spec.bundle "./other": not found`), &s); got.Error() != `spec.bundle "./other": not found` {
		t.Errorf("an overridden field got a line: %v", got)
	}
}

// A strict render's entries that match nothing (exclude, images, accept,
// config.selector, spec.excludeFiles, a patch's deletion) name the line of
// the entry, as the spec's other errors do; the requirement summary names
// no field and stays as it is.
func TestLocateStrictEntries(t *testing.T) {
	f, err := Parse("f", []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./b\n  namespace: ok\n"+
		"  exclude:\n  - Deployment\n  - Deploymnet\n"+
		"  images: {\"quay.io/olmcmp/\": \"x.io/\"}\n"+
		"  accept:\n  - api:foo.io\n"+
		"  config:\n    selector: {matchLabels: {a: b}}\n"+
		"  excludeFiles: [manifests/nope.yaml]\n"+
		"  patches:\n  - path: p.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := errors.New(strings.Join([]string{
		`strict: exclude "Deploymnet" matched no object; did you mean Deployment?`,
		`strict: images "quay.io/olmcmp/" matched no image; images rendered: quay.io/olm-cmp/x:v1`,
		`strict: accept "api:foo.io" matched no finding; the report has no findings`,
		`strict: config.selector selects nothing: OLM applies config to every Deployment of the bundle; remove it`,
		`strict: spec.excludeFiles: manifests/nope.yaml: no such file in the bundle's manifests/`,
		`strict: patches[0]: apps/Deployment ns/x: $patch: delete of spec.template.spec.volumes[name=v] deletes nothing`,
		"strict: 1 requirement(s) not met; fix each:\n  requirement api:x.io (from ClusterRole/x rules): not served",
	}, "\n"))
	want := strings.Join([]string{
		`f: line 8: strict: exclude "Deploymnet" matched no object; did you mean Deployment?`,
		`f: line 9: strict: images "quay.io/olmcmp/" matched no image; images rendered: quay.io/olm-cmp/x:v1`,
		`f: line 11: strict: accept "api:foo.io" matched no finding; the report has no findings`,
		`f: line 13: strict: config.selector selects nothing: OLM applies config to every Deployment of the bundle; remove it`,
		`f: line 14: strict: spec.excludeFiles: manifests/nope.yaml: no such file in the bundle's manifests/`,
		`f: line 16: strict: patches[0]: apps/Deployment ns/x: $patch: delete of spec.template.spec.volumes[name=v] deletes nothing`,
		"strict: 1 requirement(s) not met; fix each:\n  requirement api:x.io (from ClusterRole/x rules): not served",
	}, "\n")
	if got := f.Locate(base, &f.Spec); got.Error() != want {
		t.Errorf("want\n%s\ngot\n%v", want, got)
	}
	// An entry a flag replaced (--exclude) has no line in the file.
	s := f.Spec
	s.Exclude = []string{"Deploymnet"}
	one := `strict: exclude "Deploymnet" matched no object`
	if got := f.Locate(errors.New(one), &s); got.Error() != one {
		t.Errorf("an overridden entry got a line: %v", got)
	}
}

// An images prefix and its replacement that disagree on the trailing '/'
// would glue names together (mirror/olm-cmpgreeter) or double the slash: the
// spec names the line and the fix. A list item over-indented under another
// one is read by YAML as part of the value before it: the version is then
// no version.
func TestImagesSlashAndAPIVersion(t *testing.T) {
	const head = "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: x\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"to lacks /", head + "  images:\n    quay.io/olm-cmp/: mirror.example.com/olm-cmp\n",
			`f: line 7: spec.images["quay.io/olm-cmp/"]: the prefix ends with '/' and its replacement "mirror.example.com/olm-cmp" does not, so quay.io/olm-cmp/NAME would become mirror.example.com/olm-cmpNAME: end both with '/' or neither`},
		{"from lacks /", head + "  images:\n    quay.io/olm-cmp: mirror.example.com/olm-cmp/\n",
			`f: line 7: spec.images["quay.io/olm-cmp"]: the replacement "mirror.example.com/olm-cmp/" ends with '/' and the prefix does not, so quay.io/olm-cmp/NAME would become mirror.example.com/olm-cmp//NAME: end both with '/' or neither`},
		{"list item under another", head + "  clusterAPIs:\n  - cert-manager.io/v1\n   - x.io\n",
			`f: line 7: spec.clusterAPIs[0] "cert-manager.io/v1 - x.io": not an API version: use group/version (cert-manager.io/v1) or a group alone; a list item indented deeper than the one above it is read as part of its value`},
	} {
		f, err := Parse("f", []byte(tc.doc))
		if err == nil {
			err = f.Validate(&f.Spec)
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\ngot  %v\nwant %s", tc.name, err, tc.want)
		}
	}
	ok := head + "  images:\n    quay.io/olm-cmp/: mirror.example.com/olm-cmp/\n    quay.io/a/b: mirror.example.com/b\n  clusterAPIs: [cert-manager.io/v1beta1, monitoring.coreos.com]\n"
	if f, err := Parse("f", []byte(ok)); err != nil || f.Validate(&f.Spec) != nil {
		t.Errorf("valid entries refused: %v", err)
	}
}

// An unclosed quote or flow list gets plain words, the line it opened on
// and the fix, not the parser's "unexpected end of stream".
func TestUnclosedSyntax(t *testing.T) {
	const head = "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"unclosed double quote", head + "  namespace: \"demo\n",
			`f: not valid YAML: line 5: the quoted value that starts here has no closing '"': add it at the end of the value`},
		{"unclosed single quote", head + "  namespace: 'demo\n  createNamespace: true\n",
			`f: not valid YAML: line 5: the quoted value that starts here has no closing "'": add it at the end of the value`},
		{"unclosed flow list", head + "  namespace: demo\n  clusterAPIs: [cert-manager.io/v1\n",
			`f: not valid YAML: line 6: the list that starts with '[' here has no closing ']': add it after the last item`},
	} {
		_, err := Parse("f", []byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\ngot  %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// The render's install-mode error about spec.watchNamespaces leads with the
// field (render adds it), so it gets the line like the others.
func TestLocateWatchNamespaces(t *testing.T) {
	f, err := Parse("f", []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./b\n  namespace: ok\n  watchNamespaces: [a, b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	msg := "spec.watchNamespaces: bundle op.v1: invalid target namespaces a, b: not supported"
	if got := f.Locate(errors.New(msg), &f.Spec); got.Error() != "f: line 6: "+msg {
		t.Errorf("got %v", got)
	}
}

// An empty spec file (or one of comments only) says so and how to start
// one, not that "" is the wrong kind; a kind one letter off is named.
func TestEmptyAndMisspeltKind(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", `f: the file is empty: an olm-cmp spec starts with apiVersion: olm-cmp.dev/v1alpha1 and kind: OperatorBundle, then spec (docs/spec.md); olm-cmp init writes a first one`},
		{"comments only", "# todo\n", `f: the file is empty: an olm-cmp spec starts with apiVersion: olm-cmp.dev/v1alpha1 and kind: OperatorBundle, then spec (docs/spec.md); olm-cmp init writes a first one`},
	} {
		_, err := Parse("f", []byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\ngot  %v\nwant %s", tc.name, err, tc.want)
		}
	}
}
