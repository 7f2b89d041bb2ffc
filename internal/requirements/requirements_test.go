package requirements

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

func objects(t *testing.T, docs string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(docs), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func deployment(image, sa string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  template:
    spec:
      serviceAccountName: ` + sa + `
      containers:
      - name: manager
        image: ` + image + `
`
}

const saWithSecret = `---
apiVersion: v1
kind: ServiceAccount
metadata: {name: op}
imagePullSecrets: [{name: pull}]
`

func emptyBundle() *bundle.Bundle {
	return &bundle.Bundle{Package: "p", CSV: &v1alpha1.ClusterServiceVersion{}}
}

func webhookBundle() *bundle.Bundle {
	b := emptyBundle()
	b.CSV.Spec.WebhookDefinitions = []v1alpha1.WebhookDescription{{Type: v1alpha1.ValidatingAdmissionWebhook, DeploymentName: "op", GenerateName: "v.example.com"}}
	return b
}

func TestFindings(t *testing.T) {
	type want struct {
		key string
		sev Severity
	}
	cases := []struct {
		name    string
		bundle  *bundle.Bundle
		spec    spec.Spec
		objs    string
		apis    []string
		want    []want // exactly these pending findings
		wantSub string // a word the first finding's source must hold
	}{
		{name: "placeholder image", objs: deployment("${OPERATOR_IMAGE}", "op"),
			want: []want{{"image:${OPERATOR_IMAGE}", Required}}, wantSub: "Deployment/op container manager"},
		{name: "short name", objs: deployment("busybox:1.36", "op"),
			want: []want{{"image:busybox:1.36", Warning}}},
		{name: "latest", objs: deployment("quay.io/org/op:latest", "op"),
			want: []want{{"image:quay.io/org/op:latest", Warning}}},
		{name: "untagged", objs: deployment("quay.io/org/op", "op"),
			want: []want{{"image:quay.io/org/op", Warning}}},
		{name: "digest is fine", objs: deployment("quay.io/org/op@sha256:"+strings.Repeat("a", 64), "op")},
		{name: "credentialed registry, SA without pull secrets", objs: deployment("registry.redhat.io/x/op:1.0", "op"),
			want: []want{{"image:registry.redhat.io/x/op:1.0", Warning}}},
		{name: "credentialed registry, SA with pull secrets", objs: deployment("registry.redhat.io/x/op:1.0", "op") + saWithSecret},
		{name: "relatedImages placeholder, rewritten by spec.images", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.CSV.Spec.RelatedImages = []v1alpha1.RelatedImage{{Name: "operand", Image: "${OPERAND_IMAGE}"}}
			return b
		}(), spec: spec.Spec{Images: map[string]string{"${OPERAND_IMAGE}": "quay.io/org/operand:1.0"}}},
		{name: "relatedImages placeholder", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.CSV.Spec.RelatedImages = []v1alpha1.RelatedImage{{Name: "operand", Image: "${OPERAND_IMAGE}"}}
			return b
		}(), want: []want{{"image:${OPERAND_IMAGE}", Required}}, wantSub: "CSV relatedImages operand"},
		{name: "RBAC on an OpenShift group", objs: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
rules:
- apiGroups: ["", apps, route.openshift.io, "*", extensions]
  resources: [routes]
  verbs: [get]
`, want: []want{{"api:route.openshift.io", Warning}}, wantSub: "ClusterRole/r rules"},
		{name: "object of a third-party API", objs: `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: m}
`, want: []want{{"api:monitoring.coreos.com", Required}}},
		{name: "object of an API the render ships", objs: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  versions: [{name: v1}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`},
		{name: "object of an API the cluster serves in another version", apis: []string{"v1", "example.com/v2"}, objs: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`, want: []want{{"api:example.com/v1", Required}}},
		{name: "clusterAPIs declares the API", spec: spec.Spec{ClusterAPIs: []string{"monitoring.coreos.com/v1"}}, objs: `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: m}
`},
		{name: "KUBE_API_VERSIONS serves it", apis: []string{"v1", "apps/v1", "monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"}, objs: `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: m}
`},
		{name: "CSV required CRD", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.CSV.Spec.CustomResourceDefinitions.Required = []v1alpha1.CRDDescription{{Name: "etcdclusters.etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}}
			return b
		}(), want: []want{{"api:etcd.database.coreos.com", Required}}, wantSub: "customresourcedefinitions.required"},
		{name: "olm.gvk.required property", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.Properties = []bundle.Property{{Type: "olm.gvk.required", Value: json.RawMessage(`{"group":"kafka.strimzi.io","version":"v1beta2","kind":"Kafka"}`)}}
			return b
		}(), want: []want{{"api:kafka.strimzi.io", Required}}, wantSub: "metadata/properties.yaml"},
		{name: "service-ca serving cert annotation", objs: `apiVersion: v1
kind: Service
metadata:
  name: metrics
  annotations: {service.beta.openshift.io/serving-cert-secret-name: metrics-tls}
`, want: []want{{"openshift:service.beta.openshift.io/serving-cert-secret-name", Required}}, wantSub: "Service/metrics"},
		{name: "inject-cabundle annotation", objs: `apiVersion: v1
kind: ConfigMap
metadata:
  name: ca
  annotations: {service.beta.openshift.io/inject-cabundle: "true"}
`, want: []want{{"openshift:service.beta.openshift.io/inject-cabundle", Warning}}},
		{name: "trusted CA bundle label", objs: `apiVersion: v1
kind: ConfigMap
metadata:
  name: trusted
  labels: {config.openshift.io/inject-trusted-cabundle: "true"}
`, want: []want{{"openshift:config.openshift.io/inject-trusted-cabundle", Warning}}},
		{name: "SCC RBAC", objs: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scc}
rules:
- apiGroups: [security.openshift.io]
  resources: [securitycontextconstraints]
  verbs: [use]
`, want: []want{{"openshift:securitycontextconstraints", Warning}}},
		{name: "SCC RBAC accepted as the api group", spec: spec.Spec{Accept: []string{"api:security.openshift.io"}}, objs: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scc}
rules:
- apiGroups: [security.openshift.io]
  resources: [securitycontextconstraints]
  verbs: [use]
`},
		{name: "SCC object: the api finding stays", objs: `apiVersion: security.openshift.io/v1
kind: SecurityContextConstraints
metadata: {name: s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scc}
rules:
- apiGroups: [security.openshift.io]
  resources: [securitycontextconstraints]
  verbs: [use]
`, want: []want{{"api:security.openshift.io", Required}, {"openshift:securitycontextconstraints", Warning}}},
		{name: "SCC pod annotation", objs: `apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  template:
    metadata:
      annotations: {openshift.io/scc: restricted-v2}
    spec:
      containers: []
`, want: []want{{"openshift:openshift.io/scc", Warning}}},
		{name: "console plugin", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.CSV.Annotations = map[string]string{"console.openshift.io/plugins": `["my-plugin"]`}
			return b
		}(), want: []want{{"openshift:console.openshift.io/plugins", Warning}}},
		{name: "webhooks with cert-manager, unknown cluster", bundle: webhookBundle(),
			want: []want{{"certificates:cert-manager.io/v1", Required}}},
		{name: "webhooks with cert-manager declared", bundle: webhookBundle(), spec: spec.Spec{ClusterAPIs: []string{"cert-manager.io/v1"}}},
		{name: "webhooks with cert-manager, the cluster lacks it", bundle: webhookBundle(), apis: []string{"v1", "apps/v1"},
			want: []want{{"certificates:cert-manager.io/v1", Required}}},
		{name: "webhooks with none", bundle: webhookBundle(), spec: spec.Spec{CertificateProvider: "none", Namespace: "ns"},
			want: []want{{"certificates:Secret/op-service-cert", Warning}}},
		{name: "webhooks with service-ca", bundle: webhookBundle(), spec: spec.Spec{CertificateProvider: "service-ca"},
			want: []want{{"certificates:service-ca", Required}}},
		{name: "package dependency", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.Dependencies = []bundle.Property{{Type: "olm.package", Value: json.RawMessage(`{"packageName":"devworkspace-operator","version":">=0.11.0"}`)}}
			return b
		}(), want: []want{{"dependency:devworkspace-operator", Required}}, wantSub: "metadata/dependencies.yaml"},
		// eventing-kogito 1.2.0: the loader could not read the file.
		{name: "dependencies unknown", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.DependenciesUnreadable = "not valid YAML near line 22: did not find expected key"
			return b
		}(), want: []want{{"dependency:unknown", Warning}}, wantSub: "metadata/dependencies.yaml"},
		{name: "olm.constraint packages", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.Properties = []bundle.Property{{Type: "olm.constraint", Value: json.RawMessage(`{"failureMessage":"SBO needed","any":{"constraints":[{"package":{"packageName":"b"}},{"package":{"packageName":"a"}}]}}`)}}
			return b
		}(), want: []want{{"dependency:a or b", Required}}},
		{name: "accepted findings are not pending", spec: spec.Spec{Accept: []string{"api:route.*", "image:*"}}, objs: deployment("busybox", "op") + `---
apiVersion: route.openshift.io/v1
kind: Route
metadata: {name: r}
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.bundle
			if b == nil {
				b = emptyBundle()
			}
			var objs []*yaml.RNode
			if c.objs != "" {
				objs = objects(t, c.objs)
			}
			all := Report(Input{Bundle: b, Spec: c.spec, Objects: objs, APIVersions: c.apis})
			got := Pending(all)
			var gotKeys []want
			for _, f := range got {
				gotKeys = append(gotKeys, want{f.Key(), f.Severity})
				if f.Source == "" || f.Message == "" || f.Fix == "" {
					t.Errorf("%s: source, message and fix must be set: %+v", f.Key(), f)
				}
			}
			if !slices.Equal(gotKeys, c.want) {
				t.Fatalf("findings %v, want %v\n%+v", gotKeys, c.want, got)
			}
			if c.wantSub != "" && !strings.Contains(got[0].Source, c.wantSub) {
				t.Errorf("source %q does not name %q", got[0].Source, c.wantSub)
			}
		})
	}
}

func TestUnreadableDependenciesMessage(t *testing.T) {
	b := emptyBundle()
	b.DependenciesUnreadable = "not valid YAML near line 22: did not find expected key"
	got := Pending(Report(Input{Bundle: b}))
	want := `requirement dependency:unknown (from metadata/dependencies.yaml): the packages this operator needs installed first are unknown: metadata/dependencies.yaml cannot be read (not valid YAML near line 22: did not find expected key); OLM v1 does not read it to render, and neither does olm-cmp; fix: read the file (or the operator's documentation) for the operators it needs, install them first, then accept "dependency:unknown"`
	if len(got) != 1 || got[0].Line() != want {
		t.Fatalf("got %+v\nwant %s", got, want)
	}
}

func TestAccepts(t *testing.T) {
	f := Finding{Category: API, Subject: "route.openshift.io"}
	for entry, want := range map[string]bool{
		"api:route.openshift.io": true, "api:*.openshift.io": true, "api": true, "*:*": true,
		"api:config.openshift.io": false, "image:route.openshift.io": false, "api:route": false,
	} {
		if got := Accepts([]string{entry}, f); got != want {
			t.Errorf("accept %q: %v, want %v", entry, got, want)
		}
	}
	img := Finding{Category: Image, Subject: "registry.redhat.io/a/b:1"}
	if !Accepts([]string{"image:registry.redhat.io/*"}, img) {
		t.Error("* must match across / in image subjects")
	}
}

// One finding per subject, whatever the number of places that name it; and
// the report's order does not depend on the objects' order.
func TestMergedAndSorted(t *testing.T) {
	docs := []string{deployment("busybox", "a"), strings.Replace(deployment("busybox", "b"), "name: op", "name: op2", 1), `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: m}
`}
	one := Report(Input{Bundle: emptyBundle(), Objects: objects(t, strings.Join(docs, "---\n"))})
	slices.Reverse(docs)
	two := Report(Input{Bundle: emptyBundle(), Objects: objects(t, strings.Join(docs, "---\n"))})
	if !slices.Equal(one, two) {
		t.Fatalf("order depends on input:\n%+v\n%+v", one, two)
	}
	if len(one) != 2 || one[0].Key() != "image:busybox" || one[1].Key() != "api:monitoring.coreos.com" {
		t.Fatalf("want image:busybox once then api:monitoring.coreos.com, got %+v", one)
	}
	for _, says := range []string{"no registry host", "tag latest"} {
		if !strings.Contains(one[0].Message, says) {
			t.Errorf("image:busybox: message %q does not say %q", one[0].Message, says)
		}
	}
	if !strings.Contains(one[0].Source, "Deployment/op ") || !strings.Contains(one[0].Source, "Deployment/op2 ") {
		t.Errorf("merged source must list both Deployments: %q", one[0].Source)
	}
}

// One finding per category and subject, even when the places that name it
// get different messages (the lws operator's image: its Deployment's
// ServiceAccount, and the CSV relatedImages its operands pull); the message
// kept does not depend on the objects' order.
func TestOneFindingPerSubject(t *testing.T) {
	const img = "registry.redhat.io/x/op@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	b := emptyBundle()
	b.CSV.Spec.RelatedImages = []v1alpha1.RelatedImage{{Name: "op", Image: img}}
	for _, reverse := range []bool{false, true} {
		objs := objects(t, deployment(img, "op"))
		if reverse {
			slices.Reverse(objs)
		}
		var got []Finding
		for _, f := range Report(Input{Bundle: b, Objects: objs}) {
			if f.Key() == "image:"+img {
				got = append(got, f)
			}
		}
		if len(got) != 1 {
			t.Fatalf("want one finding for %s, got %+v", img, got)
		}
		if !strings.Contains(got[0].Source, "CSV relatedImages op") || !strings.Contains(got[0].Source, "Deployment/op container manager") {
			t.Errorf("sources not merged: %q", got[0].Source)
		}
		if want := "registry.redhat.io needs credentials, and spec.imagePullSecrets is empty (the operator's operands pull it)"; got[0].Message != want {
			t.Errorf("message %q, want %q (the first in sort order)", got[0].Message, want)
		}
	}
}

// A group only the operator's RBAC rules name may be one the operator
// installs itself (lws ships its operand's LeaderWorkerSet CRDs): the advice
// is to verify, not to install it first. Used by an object, it is to install.
func TestRBACOnlyGroupAdvice(t *testing.T) {
	const role = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: op}
rules:
- apiGroups: [leaderworkerset.x-k8s.io]
  resources: [leaderworkersets]
  verbs: [get]
`
	const object = `---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: x}
`
	cases := []struct {
		objs       string
		sev        Severity
		fixStarts  string
		sourceSays string
	}{
		{role, Warning, "verify: the operator may install it itself", "ClusterRole/op rules"},
		{role + object, Required, "install LeaderWorkerSet first and", "LeaderWorkerSet/x"},
	}
	for _, c := range cases {
		fs := Report(Input{Bundle: emptyBundle(), Objects: objects(t, c.objs)})
		if len(fs) != 1 || fs[0].Key() != "api:leaderworkerset.x-k8s.io" {
			t.Fatalf("want one api:leaderworkerset.x-k8s.io finding, got %+v", fs)
		}
		f := fs[0]
		if f.Severity != c.sev || !strings.HasPrefix(f.Fix, c.fixStarts) || !strings.Contains(f.Source, c.sourceSays) {
			t.Errorf("got %s %q (from %s), want %s, the fix starting %q", f.Severity, f.Fix, f.Source, c.sev, c.fixStarts)
		}
	}
}

// spec.accept is compiled once per report, runs of * collapsed; * and ?
// stay inside the category or the subject.
func TestGlobPattern(t *testing.T) {
	for entry, want := range map[string]string{
		"api:route.openshift.io":           `^api:route\.openshift\.io$`,
		"api:" + strings.Repeat("*", 1000): `^api:(?s:.)*$`,
		"*:a**?**b":                        `^[^:]*:a(?s:.)*(?s:.)(?s:.)*b$`,
	} {
		if got := globPattern(entry); got != want {
			t.Errorf("globPattern(%q) = %q, want %q", entry, got, want)
		}
	}
	f := Finding{Category: Image, Subject: "quay.io/a/b:1"}
	for entry, want := range map[string]bool{"image:quay.io/*:1": true, "im*": true, "image:*?": true, "i*:1": false} {
		if got := Accepts([]string{entry}, f); got != want {
			t.Errorf("accept %q: %v, want %v", entry, got, want)
		}
	}
}

// The JSON form always has accepted (docs/requirements.md documents a
// boolean), and its severity is "required" or "warning": never "error",
// since a finding does not fail the render.
func TestJSONAccepted(t *testing.T) {
	for sev, want := range map[Severity]string{Warning: `"severity":"warning"`, Required: `"severity":"required"`} {
		out, err := json.Marshal(Finding{Category: API, Subject: "x", Severity: sev})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), `"accepted":false`) || !strings.Contains(string(out), want) {
			t.Errorf("JSON %s: want \"accepted\":false and %s", out, want)
		}
	}
}

// TestPrinted: the line printed for a finding leads with its severity word,
// never "error"; "required" already says requirement, a warning says it.
func TestPrinted(t *testing.T) {
	f := Finding{Category: Certificates, Subject: "cert-manager.io/v1", Source: "CSV webhookdefinitions", Severity: Required, Message: "m", Fix: "x"}
	if got, want := f.Printed(), "required: certificates:cert-manager.io/v1 (from CSV webhookdefinitions): m; fix: x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	f.Severity = Warning
	if got, want := f.Printed(), "warning: requirement certificates:cert-manager.io/v1 (from CSV webhookdefinitions): m; fix: x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestUnmatchedAccept: an accept entry that matches no finding is reported,
// listing the findings there are; one that matches only on a cluster of
// unknown APIs (the spec may serve several clusters) is not.
func TestUnmatchedAccept(t *testing.T) {
	objs := objects(t, deployment("busybox", "op")+"---\napiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: r}\n")
	in := Input{Bundle: emptyBundle(), Objects: objs, Spec: spec.Spec{Accept: []string{
		"api:route.openshift.io", // matched on a cluster that lacks routes
		"api:rout.openshift.io",  // a typo
		"image:*",                // matched
		"openshift",              // a whole category with no finding
	}}, APIVersions: []string{"v1", "apps/v1", "route.openshift.io/v1"}}
	got := UnmatchedAccept(in, Report(in))
	want := []string{
		`accept "api:rout.openshift.io" matched no finding; findings: image:busybox`,
		`accept "openshift" matched no finding; findings: image:busybox`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	in.Spec.Accept = []string{"image:x"}
	in.Objects = nil
	if got := UnmatchedAccept(in, Report(in)); !slices.Equal(got, []string{`accept "image:x" matched no finding; the report has no findings`}) {
		t.Errorf("got %q", got)
	}
	in.Spec.Accept = nil
	if got := UnmatchedAccept(in, Report(in)); got != nil {
		t.Errorf("got %q", got)
	}
}

// TestPodSecurityLevel: an SCC finding says the Pod Security level the SCCs
// it names need (the loosest, across every role and annotation merged into
// it), or none when one is custom or a rule covers every SCC.
func TestPodSecurityLevel(t *testing.T) {
	role := func(name string, sccs ...string) string {
		names := ""
		if len(sccs) > 0 {
			names = "\n  resourceNames: [" + strings.Join(sccs, ", ") + "]"
		}
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + name + "}\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]" + names + "\n  verbs: [use]\n"
	}
	for _, c := range []struct {
		name, objs, subject, level, fix string
	}{
		{"privileged", role("a", "privileged"), "securitycontextconstraints", "privileged",
			`label the install namespace pod-security.kubernetes.io/enforce: privileged (spec.namespaceLabels; the level of the SCC privileged), then accept "openshift:securitycontextconstraints" (spec.accept)`},
		{"anyuid and restricted", role("a", "restricted-v2", "anyuid"), "securitycontextconstraints", "baseline", ""},
		{"loosest of two roles", role("a", "restricted") + "---\n" + role("b", "hostnetwork"), "securitycontextconstraints", "privileged", ""},
		{"a custom SCC", role("a", "kubevirt-handler", "privileged"), "securitycontextconstraints", "",
			`label the install namespace with the pod-security.kubernetes.io/enforce level its pods need (spec.namespaceLabels; privileged allows everything an SCC can), then accept "openshift:securitycontextconstraints" (spec.accept)`},
		{"every SCC", role("a"), "securitycontextconstraints", "", ""},
		{"annotation", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {openshift.io/scc: nonroot-v2}}\n", "openshift.io/scc", "baseline", ""},
	} {
		var got *Finding
		for _, f := range Report(Input{Bundle: emptyBundle(), Objects: objects(t, c.objs)}) {
			if f.Key() == "openshift:"+c.subject {
				got = &f
			}
		}
		if got == nil || got.PodSecurityLevel() != c.level || c.fix != "" && got.Fix != c.fix {
			t.Errorf("%s: got %+v, want level %q and fix %q", c.name, got, c.level, c.fix)
		}
	}
}

// TestRBACOnly: an api finding says whether only RBAC rules name its group.
func TestRBACOnly(t *testing.T) {
	objs := objects(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules:\n- apiGroups: [a.example.com, b.example.com]\n  resources: ['*']\n  verbs: [get]\n---\napiVersion: b.example.com/v1\nkind: B\nmetadata: {name: b}\n")
	got := map[string]bool{}
	for _, f := range Report(Input{Bundle: emptyBundle(), Objects: objs}) {
		got[f.Key()] = f.RBACOnly()
	}
	if want := map[string]bool{"api:a.example.com": true, "api:b.example.com": false}; !maps.Equal(got, want) {
		t.Errorf("RBACOnly %v, want %v", got, want)
	}
}
