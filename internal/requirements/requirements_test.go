package requirements

import (
	"encoding/json"
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
			want: []want{{"image:${OPERATOR_IMAGE}", Error}}, wantSub: "Deployment/op container manager"},
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
		}(), want: []want{{"image:${OPERAND_IMAGE}", Error}}, wantSub: "CSV relatedImages operand"},
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
`, want: []want{{"api:monitoring.coreos.com", Error}}},
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
`, want: []want{{"api:example.com/v1", Error}}},
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
		}(), want: []want{{"api:etcd.database.coreos.com", Error}}, wantSub: "customresourcedefinitions.required"},
		{name: "olm.gvk.required property", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.Properties = []bundle.Property{{Type: "olm.gvk.required", Value: json.RawMessage(`{"group":"kafka.strimzi.io","version":"v1beta2","kind":"Kafka"}`)}}
			return b
		}(), want: []want{{"api:kafka.strimzi.io", Error}}, wantSub: "metadata/properties.yaml"},
		{name: "service-ca serving cert annotation", objs: `apiVersion: v1
kind: Service
metadata:
  name: metrics
  annotations: {service.beta.openshift.io/serving-cert-secret-name: metrics-tls}
`, want: []want{{"openshift:service.beta.openshift.io/serving-cert-secret-name", Error}}, wantSub: "Service/metrics"},
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
`, want: []want{{"api:security.openshift.io", Warning}, {"openshift:securitycontextconstraints", Warning}}},
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
			want: []want{{"certificates:cert-manager.io/v1", Error}}},
		{name: "webhooks with cert-manager declared", bundle: webhookBundle(), spec: spec.Spec{ClusterAPIs: []string{"cert-manager.io/v1"}}},
		{name: "webhooks with cert-manager, the cluster lacks it", bundle: webhookBundle(), apis: []string{"v1", "apps/v1"},
			want: []want{{"certificates:cert-manager.io/v1", Error}}},
		{name: "webhooks with none", bundle: webhookBundle(), spec: spec.Spec{CertificateProvider: "none", Namespace: "ns"},
			want: []want{{"certificates:Secret/op-service-cert", Warning}}},
		{name: "webhooks with service-ca", bundle: webhookBundle(), spec: spec.Spec{CertificateProvider: "service-ca"},
			want: []want{{"certificates:service-ca", Error}}},
		{name: "package dependency", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.Dependencies = []bundle.Property{{Type: "olm.package", Value: json.RawMessage(`{"packageName":"devworkspace-operator","version":">=0.11.0"}`)}}
			return b
		}(), want: []want{{"dependency:devworkspace-operator", Error}}, wantSub: "metadata/dependencies.yaml"},
		{name: "olm.constraint packages", bundle: func() *bundle.Bundle {
			b := emptyBundle()
			b.Properties = []bundle.Property{{Type: "olm.constraint", Value: json.RawMessage(`{"failureMessage":"SBO needed","any":{"constraints":[{"package":{"packageName":"b"}},{"package":{"packageName":"a"}}]}}`)}}
			return b
		}(), want: []want{{"dependency:a or b", Error}}},
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
	if len(one) != 3 || one[0].Key() != "image:busybox" || one[2].Key() != "api:monitoring.coreos.com" {
		t.Fatalf("want image:busybox twice (short, untagged) then api:monitoring.coreos.com, got %+v", one)
	}
	if !strings.Contains(one[0].Source, "Deployment/op ") || !strings.Contains(one[0].Source, "Deployment/op2 ") {
		t.Errorf("merged source must list both Deployments: %q", one[0].Source)
	}
}
