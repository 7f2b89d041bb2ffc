package transform

import (
	"slices"
	"testing"
)

func TestAnnotate(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  annotations:
    z: last # comment
data: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
spec:
  template:
    metadata:
      annotations:
        pod: only
`
	want := `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  annotations:
    z: last # comment
    olm-cmp.dev/bundle: 'etcd@1.2.3'
data: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.2.3'
spec:
  template:
    metadata:
      annotations:
        pod: only
`
	f := Annotate("olm-cmp.dev/bundle", "etcd@1.2.3")
	got := run(t, f, in)
	diff(t, got, want)
	diff(t, run(t, f, got), want)
}

const apiVersionsInput = `apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  namespace: ops
---
apiVersion: console.openshift.io/v1
kind: ConsoleYAMLSample
metadata:
  name: sample
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: metrics
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: rules
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.example.com
spec:
  group: etcd.example.com
  names:
    kind: EtcdCluster
  versions:
  - name: v1beta1
  - name: v1
---
apiVersion: etcd.example.com/v1
kind: EtcdCluster
metadata:
  name: new-crd
---
apiVersion: etcd.example.com/v2
kind: EtcdCluster
metadata:
  name: unknown-version
`

func TestAPIVersions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		served   []string
		kept     []string
		warnings []string
	}{
		{"unknown cluster keeps everything", nil,
			[]string{"ConfigMap/cm", "Deployment/op", "ConsoleYAMLSample/sample", "ServiceMonitor/metrics", "PrometheusRule/rules", "CustomResourceDefinition/etcdclusters.etcd.example.com", "EtcdCluster/new-crd", "EtcdCluster/unknown-version"}, nil},
		{"group/versions only", []string{"v1", "apps/v1", "apiextensions.k8s.io/v1", "monitoring.coreos.com/v1"},
			[]string{"ConfigMap/cm", "Deployment/op", "ServiceMonitor/metrics", "PrometheusRule/rules", "CustomResourceDefinition/etcdclusters.etcd.example.com", "EtcdCluster/new-crd"},
			[]string{
				"dropped console.openshift.io/ConsoleYAMLSample sample: the cluster does not serve console.openshift.io/v1",
				"dropped etcd.example.com/EtcdCluster unknown-version: the cluster does not serve etcd.example.com/v2",
			}},
		{"with kinds, as Argo CD sends them", []string{"v1", "v1/ConfigMap", "apps/v1", "apps/v1/Deployment", "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1/CustomResourceDefinition", "monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor", "etcd.example.com/v2"},
			[]string{"ConfigMap/cm", "Deployment/op", "ServiceMonitor/metrics", "CustomResourceDefinition/etcdclusters.etcd.example.com", "EtcdCluster/new-crd", "EtcdCluster/unknown-version"},
			[]string{
				"dropped console.openshift.io/ConsoleYAMLSample sample: the cluster does not serve console.openshift.io/v1",
				"dropped monitoring.coreos.com/PrometheusRule rules: the cluster does not serve kind PrometheusRule in monitoring.coreos.com/v1",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w warnings
			got := names(t, run(t, APIVersions(tc.served, w.add), apiVersionsInput))
			if !slices.Equal(got, tc.kept) {
				t.Errorf("kept %v\nwant %v", got, tc.kept)
			}
			if !slices.Equal(w, tc.warnings) {
				t.Errorf("warnings %q\nwant %q", w, tc.warnings)
			}
		})
	}
}
