package convert

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// certVolume is one of the serving-certificate volumes OLM mounts into webhook
// (and, in v0, API service) deployments.
type certVolume struct{ name, path, certFile, keyFile string }

var certVolumes = []certVolume{
	{"webhook-cert", "/tmp/k8s-webhook-server/serving-certs", "tls.crt", "tls.key"},
	{"apiservice-cert", "/apiserver.local.config/certificates", "apiserver.crt", "apiserver.key"},
}

// GenerateDeployments reproduces OLM v1's BundleCSVDeploymentGenerator (itself
// OLM v0's deploymentForSpec without the OLM-managed labels):
//   - name deployments[].name, in the install namespace, labels only
//     deployments[].label;
//   - revisionHistoryLimit 1;
//   - pod template annotations = CSV annotations merged under the template's
//     own (the template wins; in v0 the CSV wins), plus olm.targetNamespaces
//     (targets joined by ",") and olm.operatorNamespace;
//   - for deployments serving webhooks, with a certificate provider, the
//     webhook-cert and apiservice-cert volumes replace any volume of that
//     name or mounted at their paths, in every container;
//   - then the DeploymentConfig (OLM v0's SubscriptionConfig) is applied.
//
// No environment variables are injected (OLM v0's OPERATOR_CONDITION_NAME is not).
func GenerateDeployments(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	webhookDeps := map[string]bool{}
	for _, wh := range csvSpec(b).WebhookDefinitions {
		webhookDeps[wh.DeploymentName] = true
	}
	// The loader (bundle.LoadFS) has already merged metadata/properties.yaml
	// into the CSV's olm.properties annotation, as OLM's bundle source does.
	var csvAnnotations map[string]string
	if b.CSV != nil {
		csvAnnotations = b.CSV.Annotations
	}
	specs := csvSpec(b).InstallStrategy.StrategySpec.DeploymentSpecs
	deps := make([]appsv1.Deployment, 0, len(specs))
	for _, ds := range specs {
		dep := appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: ds.Name, Namespace: o.InstallNamespace, Labels: maps.Clone(ds.Label)},
			Spec:       *ds.Spec.DeepCopy(),
		}
		ann := merge(csvAnnotations, dep.Spec.Template.Annotations)
		ann["olm.targetNamespaces"] = strings.Join(o.TargetNamespaces, ",")
		ann["olm.operatorNamespace"] = o.InstallNamespace
		dep.Spec.Template.Annotations = ann
		dep.Spec.RevisionHistoryLimit = new(int32(1))
		if certs := certsFor(ds.Name, o); webhookDeps[ds.Name] && certs.hasProvider() {
			setCertVolumes(&dep.Spec.Template.Spec, certs.Cert)
		}
		applyDeploymentConfig(&dep, o.DeploymentConfig)
		deps = append(deps, dep)
	}
	return toRNodes(deps)
}

// merge is OLM's MergeMaps: later maps win. The result is never nil.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// setCertVolumes is OLM v1's ensureCorrectDeploymentCertVolumes: drop volumes
// (and their mounts) named like a cert volume or mounted at a cert path, then
// append the cert volumes from secret and mount them in every container (not
// init containers).
func setCertVolumes(pod *corev1.PodSpec, secret string) {
	drop := map[string]bool{}
	paths := map[string]bool{}
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, cv := range certVolumes {
		drop[cv.name] = true
		paths[cv.path] = true
		vols = append(vols, corev1.Volume{Name: cv.name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret,
			Items:      []corev1.KeyToPath{{Key: "tls.crt", Path: cv.certFile}, {Key: "tls.key", Path: cv.keyFile}},
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: cv.name, MountPath: cv.path})
	}
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if paths[m.MountPath] {
				drop[m.Name] = true
			}
		}
	}
	pod.Volumes = slices.Concat(slices.DeleteFunc(pod.Volumes, func(v corev1.Volume) bool { return drop[v.Name] }), vols)
	for i := range pod.Containers {
		c := &pod.Containers[i]
		c.VolumeMounts = slices.Concat(slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return drop[m.Name] }), mounts)
	}
}

// applyDeploymentConfig applies a SubscriptionConfig the way OLM v1 applies its
// DeploymentConfig, which follows OLM v0's overrides/inject (noted where v1
// differs from v0). Selector is ignored, as in OLM v0 and v1.
func applyDeploymentConfig(dep *appsv1.Deployment, cfg *v1alpha1.SubscriptionConfig) {
	if cfg == nil {
		return
	}
	pod := &dep.Spec.Template.Spec
	for i := range pod.Containers {
		c := &pod.Containers[i]
		c.Env = mergeByName(c.Env, cfg.Env, func(e corev1.EnvVar) string { return e.Name })
		c.EnvFrom = appendMissing(c.EnvFrom, cfg.EnvFrom)
		// OLM v0 appends mounts; v1 (and we) replace same-named ones.
		c.VolumeMounts = mergeByName(c.VolumeMounts, cfg.VolumeMounts, func(m corev1.VolumeMount) string { return m.Name })
		if cfg.Resources != nil {
			c.Resources = *cfg.Resources.DeepCopy()
		}
	}
	pod.Volumes = mergeByName(pod.Volumes, cfg.Volumes, func(v corev1.Volume) string { return v.Name })
	pod.Tolerations = appendMissing(pod.Tolerations, cfg.Tolerations)
	if cfg.NodeSelector != nil {
		pod.NodeSelector = maps.Clone(cfg.NodeSelector)
	}
	applyAffinity(pod, cfg.Affinity)
	if len(cfg.Annotations) > 0 {
		dep.Annotations = addMissing(dep.Annotations, cfg.Annotations)
		dep.Spec.Template.Annotations = addMissing(dep.Spec.Template.Annotations, cfg.Annotations)
	}
}

// mergeByName replaces items of have that share a name with one of add and
// appends the rest of add.
func mergeByName[T any](have, add []T, name func(T) string) []T {
	for _, a := range add {
		i := slices.IndexFunc(have, func(h T) bool { return name(h) == name(a) })
		if i >= 0 {
			have[i] = a
		} else {
			have = append(have, a)
		}
	}
	return have
}

// appendMissing appends the items of add not already (deeply) present.
func appendMissing[T any](have, add []T) []T {
	for _, a := range add {
		if !slices.ContainsFunc(have, func(h T) bool { return reflect.DeepEqual(h, a) }) {
			have = append(have, a)
		}
	}
	return have
}

// addMissing adds annotations whose key is not set yet: existing keys win.
func addMissing(have, add map[string]string) map[string]string {
	if have == nil {
		have = map[string]string{}
	}
	for k, v := range add {
		if _, ok := have[k]; !ok {
			have[k] = v
		}
	}
	return have
}

// applyAffinity follows OLM v0's affinity rules: nil leaves the pod alone; an
// affinity with no field set erases the pod's; each set sub-field replaces the
// pod's, or erases it when it is empty; an affinity left empty becomes nil.
func applyAffinity(pod *corev1.PodSpec, a *corev1.Affinity) {
	if a == nil {
		return
	}
	if a.NodeAffinity == nil && a.PodAffinity == nil && a.PodAntiAffinity == nil {
		pod.Affinity = nil
		return
	}
	if pod.Affinity == nil {
		pod.Affinity = &corev1.Affinity{}
	}
	if a.NodeAffinity != nil {
		pod.Affinity.NodeAffinity = nilIfEmpty(a.NodeAffinity.DeepCopy(), nodeAffinityEmpty)
	}
	if a.PodAffinity != nil {
		pod.Affinity.PodAffinity = nilIfEmpty(a.PodAffinity.DeepCopy(), podAffinityEmpty)
	}
	if a.PodAntiAffinity != nil {
		pod.Affinity.PodAntiAffinity = nilIfEmpty(a.PodAntiAffinity.DeepCopy(), podAntiAffinityEmpty)
	}
	if nodeAffinityEmpty(pod.Affinity.NodeAffinity) && podAffinityEmpty(pod.Affinity.PodAffinity) && podAntiAffinityEmpty(pod.Affinity.PodAntiAffinity) {
		pod.Affinity = nil
	}
}

func nilIfEmpty[T any](v *T, empty func(*T) bool) *T {
	if empty(v) {
		return nil
	}
	return v
}

func nodeAffinityEmpty(a *corev1.NodeAffinity) bool {
	return a == nil || ((a.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
		len(a.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0) &&
		len(a.PreferredDuringSchedulingIgnoredDuringExecution) == 0)
}

func podAffinityEmpty(a *corev1.PodAffinity) bool {
	return a == nil || (len(a.RequiredDuringSchedulingIgnoredDuringExecution) == 0 &&
		len(a.PreferredDuringSchedulingIgnoredDuringExecution) == 0)
}

func podAntiAffinityEmpty(a *corev1.PodAntiAffinity) bool {
	return a == nil || (len(a.RequiredDuringSchedulingIgnoredDuringExecution) == 0 &&
		len(a.PreferredDuringSchedulingIgnoredDuringExecution) == 0)
}
