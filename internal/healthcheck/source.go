package healthcheck

import (
	"fmt"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// NewSource collects the CRDs of a render's manifests (one YAML document each, as
// render.Result holds them): the CRDs as they will be applied, after the spec's patches.
func NewSource(name string, csv *v1alpha1.ClusterServiceVersion, manifests []string) (Source, error) {
	s := Source{Name: name, CSV: csv}
	for _, m := range manifests {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(m), &head); err != nil {
			return Source{}, fmt.Errorf("%s: a rendered manifest does not read back: %v", name, err)
		}
		if head.Kind != "CustomResourceDefinition" || !strings.HasPrefix(head.APIVersion, "apiextensions.k8s.io/") {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal([]byte(m), crd); err != nil {
			return Source{}, fmt.Errorf("%s: a rendered CustomResourceDefinition does not read back: %v", name, err)
		}
		s.CRDs = append(s.CRDs, crd)
	}
	return s, nil
}
