package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// podSecurityLevels and podSecurityModes are what the PodSecurity admission
// plugin takes in its namespace labels (k8s.io/pod-security-admission's
// api package): it refuses a Namespace with another level, so the render
// must not emit one.
var (
	podSecurityLevels = []string{"privileged", "baseline", "restricted"}
	podSecurityModes  = []string{"enforce", "audit", "warn"}
)

// PodSecurityPrefix starts the Pod Security Admission namespace labels.
const PodSecurityPrefix = "pod-security.kubernetes.io/"

// MaxNamespaceMetadata bounds spec.namespaceLabels and
// spec.namespaceAnnotations, each: a namespace carries a handful, and
// setting each one on the rendered Namespace looks through the ones set
// before it.
const MaxNamespaceMetadata = 256

// metadataKeyPath is a key's path for messages, the key cut and quoted
// when it is too long to repeat whole (a label key is at most 317 bytes
// anyway).
func metadataKeyPath(field, k string) string {
	if len(k) > 120 {
		return field + "[" + echo.Quote(k) + "]"
	}
	return keyPath(field, k)
}

// checkNamespaceMetadata checks spec.namespaceLabels and
// spec.namespaceAnnotations as the API server checks a Namespace's metadata
// (apimachinery's rules, with words instead of its regular expressions),
// and the Pod Security labels as its admission plugin does.
func checkNamespaceMetadata(labels, annotations map[string]string) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(labels) > MaxNamespaceMetadata || len(annotations) > MaxNamespaceMetadata {
		for _, m := range []struct {
			field string
			n     int
		}{{"spec.namespaceLabels", len(labels)}, {"spec.namespaceAnnotations", len(annotations)}} {
			if m.n > MaxNamespaceMetadata {
				add("%s: %d entries, over the %d olm-cmp takes: a namespace needs a few; set the rest where the namespace is managed", m.field, m.n, MaxNamespaceMetadata)
			}
		}
		return errs // each key's check waits until the maps are within bounds
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v, path := labels[k], metadataKeyPath("spec.namespaceLabels", k)
		if len(validation.IsQualifiedName(k)) > 0 {
			add("%s: not a label key: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, after an optional DNS-name prefix and '/' (pod-security.kubernetes.io/enforce)", path)
			continue
		}
		if len(validation.IsValidLabelValue(v)) > 0 {
			add("%s %s: not a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, or empty", path, echo.Quote(v))
			continue
		}
		if k == "kubernetes.io/metadata.name" {
			add("%s: the API server sets this label to the namespace's name itself (a value of yours would show as a difference for ever): leave it out", path)
			continue
		}
		if msg := checkPodSecurity(k, v); msg != "" {
			add("%s %s: %s", path, echo.Quote(v), msg)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		path := metadataKeyPath("spec.namespaceAnnotations", k)
		switch {
		case len(validation.IsQualifiedName(strings.ToLower(k))) > 0:
			add("%s: not an annotation key: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, after an optional DNS-name prefix and '/'", path)
		case strings.HasPrefix(k, "olm-cmp.dev/"):
			add("%s: olm-cmp writes the olm-cmp.dev/ annotations itself: use another key", path)
		case k == "argocd.argoproj.io/sync-wave":
			add("%s: the Namespace's wave is spec.syncWaves.crds: set it there", path)
		}
	}
	if len(annotations) > 0 {
		if e := apimachineryvalidation.ValidateAnnotationsSize(annotations); e != nil {
			add("spec.namespaceAnnotations: %d bytes in all, over the API server's limit of %d", totalSize(annotations), apimachineryvalidation.TotalAnnotationSizeLimitB)
		}
	}
	return errs
}

// checkPodSecurity says why a pod-security.kubernetes.io/ label would be
// refused by the PodSecurity admission plugin ("" when it would not).
func checkPodSecurity(k, v string) string {
	mode, ok := strings.CutPrefix(k, PodSecurityPrefix)
	if !ok {
		return ""
	}
	base, version := strings.CutSuffix(mode, "-version")
	if !slices.Contains(podSecurityModes, base) {
		return fmt.Sprintf("not a Pod Security label: the keys are %s{enforce,audit,warn} and their -version", PodSecurityPrefix)
	}
	if version {
		if v == "latest" || validPodSecurityVersion(v) {
			return ""
		}
		return "not a Pod Security version: latest, or a Kubernetes minor version such as v1.34"
	}
	if !slices.Contains(podSecurityLevels, v) {
		return "not a Pod Security level: privileged, baseline or restricted"
	}
	return ""
}

// validPodSecurityVersion reports whether v reads as v1.N, the form the
// admission plugin parses.
func validPodSecurityVersion(v string) bool {
	minor, ok := strings.CutPrefix(v, "v1.")
	if !ok || minor == "" || len(minor) > 3 {
		return false
	}
	for _, r := range minor {
		if r < '0' || r > '9' {
			return false
		}
	}
	return minor == "0" || minor[0] != '0'
}

func totalSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}
