package convert

import (
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestApplyDeploymentConfig(t *testing.T) {
	dep := &appsv1.Deployment{}
	dep.Annotations = map[string]string{"keep": "deployment"}
	pod := &dep.Spec.Template.Spec
	dep.Spec.Template.Annotations = map[string]string{"keep": "pod"}
	pod.Containers = []corev1.Container{{
		Name:         "c",
		Env:          []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
		EnvFrom:      []corev1.EnvFromSource{{Prefix: "p"}},
		VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/old"}},
		Resources:    corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	}}
	pod.Volumes = []corev1.Volume{{Name: "v"}}
	pod.Tolerations = []corev1.Toleration{{Key: "k"}}
	pod.NodeSelector = map[string]string{"old": "x"}
	pod.Affinity = &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}},
		PodAffinity:  &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 2}}},
	}

	applyDeploymentConfig(dep, &v1alpha1.SubscriptionConfig{
		Env:          []corev1.EnvVar{{Name: "B", Value: "override"}, {Name: "C", Value: "3"}},
		EnvFrom:      []corev1.EnvFromSource{{Prefix: "p"}, {Prefix: "q"}},
		VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/new"}},
		Volumes:      []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, {Name: "w"}},
		Tolerations:  []corev1.Toleration{{Key: "k"}, {Key: "l"}},
		Resources:    &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}},
		NodeSelector: map[string]string{"new": "y"},
		Affinity:     &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}, // erase node affinity only
		Annotations:  map[string]string{"keep": "config", "add": "config"},
	})
	c := pod.Containers[0]
	if len(c.Env) != 3 || c.Env[1].Value != "override" || c.Env[2].Name != "C" {
		t.Errorf("env: %+v", c.Env)
	}
	if len(c.EnvFrom) != 2 {
		t.Errorf("envFrom must be de-duplicated: %+v", c.EnvFrom)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/new" {
		t.Errorf("volumeMounts merged by name: %+v", c.VolumeMounts)
	}
	if len(pod.Volumes) != 2 || pod.Volumes[0].EmptyDir == nil {
		t.Errorf("volumes merged by name: %+v", pod.Volumes)
	}
	if len(pod.Tolerations) != 2 {
		t.Errorf("tolerations de-duplicated: %+v", pod.Tolerations)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok || c.Resources.Requests.Memory().String() != "1Mi" {
		t.Errorf("resources replaced: %+v", c.Resources)
	}
	if pod.NodeSelector["new"] != "y" || pod.NodeSelector["old"] != "" {
		t.Errorf("nodeSelector replaced: %v", pod.NodeSelector)
	}
	if pod.Affinity == nil || pod.Affinity.NodeAffinity != nil || pod.Affinity.PodAffinity == nil {
		t.Errorf("affinity: want node affinity erased, pod affinity kept: %+v", pod.Affinity)
	}
	if dep.Annotations["keep"] != "deployment" || dep.Annotations["add"] != "config" || dep.Spec.Template.Annotations["keep"] != "pod" || dep.Spec.Template.Annotations["add"] != "config" {
		t.Errorf("annotations: existing keys win: %v %v", dep.Annotations, dep.Spec.Template.Annotations)
	}

	applyDeploymentConfig(dep, &v1alpha1.SubscriptionConfig{Affinity: &corev1.Affinity{}})
	if pod.Affinity != nil {
		t.Error("affinity {} must erase the pod's affinity")
	}
}

// BenchmarkConvertSail measures the conversion alone (the bundle is loaded once).
func BenchmarkConvertSail(b *testing.B) {
	dir := sharedDir(b) + "/bundles/sailoperator-1.30.3"
	bun := loadBundle(b, dir)
	o := Options{InstallNamespace: "sail-system", CertProvider: CertManager}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Convert(bun, o); err != nil {
			b.Fatal(err)
		}
	}
}
