package transform

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Argo CD annotations.
const (
	SyncWaveAnnotation    = "argocd.argoproj.io/sync-wave"
	SyncOptionsAnnotation = "argocd.argoproj.io/sync-options"
)

// Sync options we set.
const (
	OptServerSideApply = "ServerSideApply=true"
	OptDeleteFalse     = "Delete=false"
	OptPruneFalse      = "Prune=false"
	OptSkipDryRun      = "SkipDryRunOnMissingResource=true"
	OptPruneLast       = "PruneLast=true"
)

// CRMarker is the internal annotation MarkCR sets and WaveStep removes.
// Internal annotations (prefix internal.olm-cmp.dev/) never reach the output:
// Serialize drops any left.
const (
	internalPrefix = "internal.olm-cmp.dev/"
	CRMarker       = internalPrefix + "custom-resource"
)

// Client-side apply stores the whole object as JSON in the annotation
// kubectl.kubernetes.io/last-applied-configuration, and the API server rejects
// objects whose annotations (keys + values, that one included) exceed
// MaxAnnotationsSize bytes. SyncWaves estimates that total exactly as kubectl
// builds it (see lastAppliedSize) and asks for server-side apply above
// MaxAnnotationsSize - SSAMargin. The margin covers what Argo CD adds before
// applying: its tracking annotation argocd.argoproj.io/tracking-id (≈1 KB at
// most, counted twice: as an annotation and inside the JSON), the
// app.kubernetes.io/instance label, and the sync-options annotation set after
// the measure.
const (
	MaxAnnotationsSize   = 262144
	SSAMargin            = 4096
	lastAppliedConfigKey = "kubectl.kubernetes.io/last-applied-configuration"
)

// markCRFilter marks objects as custom resources.
type markCRFilter struct{}

// MarkCR marks every object it sees as a custom resource, for SyncWaves: the
// caller runs it over the alm-examples and the user's extra manifests before
// adding them to the bundle's objects. The mark is an internal annotation
// (CRMarker); WaveStep notes it and removes it, before patches run.
func MarkCR() kio.Filter { return markCRFilter{} }

func (markCRFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	for _, n := range nodes {
		if err := n.PipeE(yaml.SetAnnotation(CRMarker, "true")); err != nil {
			return nil, fmt.Errorf("%s: %w", describe(n), err)
		}
	}
	return nodes, nil
}

// isMarkedCR reports whether MarkCR marked n.
func isMarkedCR(n *yaml.RNode) bool {
	_, ok := n.GetAnnotations(CRMarker)[CRMarker]
	return ok
}

// SyncWaveSteps sets Argo CD sync waves and options in two steps that share what
// the first learnt: WaveStep runs before exclude and patches, so patches see
// (and may change) the waves and options, and OptionsStep runs after them, on
// the final objects.
type SyncWaveSteps struct {
	waves    spec.Waves
	keepCRDs bool
	// markedCRs are the objects MarkCR marked (by objectKey): WaveStep
	// removes the mark, so patches never see an internal annotation.
	markedCRs map[string]bool
}

// SyncWaves annotates every object with its Argo CD sync wave and options: it
// runs WaveStep and then OptionsStep of one NewSyncWaves.
func SyncWaves(w spec.Waves, keepCRDs bool) kio.Filter {
	s := NewSyncWaves(w, keepCRDs)
	return kio.FilterFunc(func(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
		return Apply(nodes, s.WaveStep(), s.OptionsStep())
	})
}

// NewSyncWaves returns the two steps of sync waves and options.
//
// Waves, by group:
//
//   - w.CRDs: Namespaces and CustomResourceDefinitions.
//   - w.RBAC: ServiceAccounts, Roles, ClusterRoles, RoleBindings, ClusterRoleBindings.
//   - w.Webhooks: Validating/MutatingWebhookConfigurations and APIServices: they
//     route API calls to the operator, so they wait until it is healthy.
//   - w.CRs: custom resources: objects whose kind a CRD in the render defines,
//     and objects marked by MarkCR unless their group is a built-in Kubernetes
//     one (a marked ConfigMap or RoleBinding keeps its group's wave).
//   - w.Operator: everything else (Deployments, Services, ConfigMaps, Secrets,
//     cert-manager Issuers and Certificates, ...).
//
// An object that already has a sync-wave annotation keeps it: that is how an
// extra manifest, or a patch run after WaveStep, overrides a wave.
//
// Sync options, merged into argocd.argoproj.io/sync-options (options already
// there come first and win for the same key; ours follow in the order below):
//
//   - ServerSideApply=true when the object is too large for client-side apply
//     (see MaxAnnotationsSize, SSAMargin).
//   - Delete=false and Prune=false on CRDs when keepCRDs: deleting a CRD deletes
//     every custom resource of it.
//   - SkipDryRunOnMissingResource=true on custom resources whose CRD is not in
//     the render (it is installed by something else, perhaps in the same sync).
//   - PruneLast=true on ServiceAccounts, Roles, ClusterRoles and their
//     bindings: a bump's old RBAC stays until the new operator runs.
//
// WaveStep sets the waves and the options the objects call for as they are;
// OptionsStep decides again on the final objects (after exclude, patches and
// the live form) and adds what is missing, key by key: an option a patch set
// wins, an option a patch removed comes back unless the patch set its key,
// and the size is measured on the final object.
func NewSyncWaves(w spec.Waves, keepCRDs bool) *SyncWaveSteps {
	return &SyncWaveSteps{waves: w, keepCRDs: keepCRDs, markedCRs: map[string]bool{}}
}

// waveStep is SyncWaveSteps.WaveStep.
type waveStep struct{ *SyncWaveSteps }

// optionsStep is SyncWaveSteps.OptionsStep.
type optionsStep struct{ *SyncWaveSteps }

// WaveStep sets waves and options, and removes MarkCR's marks.
func (s *SyncWaveSteps) WaveStep() kio.Filter { return waveStep{s} }

// OptionsStep adds the sync options the final objects call for.
func (s *SyncWaveSteps) OptionsStep() kio.Filter { return optionsStep{s} }

func (s waveStep) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	defined := crdKinds(nodes)
	for _, n := range nodes {
		if isHook(n) { // a resource hook runs in its hook phase, after the waves
			continue
		}
		if isMarkedCR(n) {
			s.markedCRs[objectKey(n)] = true
			if err := n.PipeE(yaml.ClearAnnotation(CRMarker)); err != nil {
				return nil, fmt.Errorf("sync waves: %s: %w", describe(n), err)
			}
			if err := yaml.ClearEmptyAnnotations(n); err != nil {
				return nil, fmt.Errorf("sync waves: %s: %w", describe(n), err)
			}
		}
		g := s.classify(n, defined)
		if _, ok := n.GetAnnotations(SyncWaveAnnotation)[SyncWaveAnnotation]; !ok {
			if err := n.PipeE(yaml.SetAnnotation(SyncWaveAnnotation, strconv.Itoa(s.wave(g)))); err != nil {
				return nil, fmt.Errorf("sync waves: %s: %w", describe(n), err)
			}
		}
		if err := s.setOptions(n, g, defined); err != nil {
			return nil, fmt.Errorf("sync waves: %s: %w", describe(n), err)
		}
	}
	return nodes, nil
}

func (s optionsStep) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	defined := crdKinds(nodes)
	for _, n := range nodes {
		if isHook(n) {
			continue
		}
		if err := s.setOptions(n, s.classify(n, defined), defined); err != nil {
			return nil, fmt.Errorf("sync options: %s: %w", describe(n), err)
		}
	}
	return nodes, nil
}

// wave groups.
type waveGroup int

const (
	groupOperator waveGroup = iota
	groupCRDs
	groupRBACObjects
	groupWebhooks
	groupCRs
)

// classify returns the wave group of n.
func (s *SyncWaveSteps) classify(n *yaml.RNode, defined map[groupKind][]string) waveGroup {
	gk := gkOf(n)
	switch gk {
	case groupKind{groupCore, "Namespace"}, groupKind{groupAPIExtensions, "CustomResourceDefinition"}:
		return groupCRDs
	case groupKind{groupCore, "ServiceAccount"},
		groupKind{groupRBAC, "Role"}, groupKind{groupRBAC, "ClusterRole"},
		groupKind{groupRBAC, "RoleBinding"}, groupKind{groupRBAC, "ClusterRoleBinding"}:
		return groupRBACObjects
	case groupKind{groupAdmission, "ValidatingWebhookConfiguration"},
		groupKind{groupAdmission, "MutatingWebhookConfiguration"},
		groupKind{groupAPIRegistry, "APIService"}:
		return groupWebhooks
	}
	if _, ok := defined[gk]; ok {
		return groupCRs
	}
	if (isMarkedCR(n) || s.markedCRs[objectKey(n)]) && !builtinGroups[gk.Group] {
		return groupCRs
	}
	return groupOperator
}

func (s *SyncWaveSteps) wave(g waveGroup) int {
	switch g {
	case groupCRDs:
		return s.waves.CRDs
	case groupRBACObjects:
		return s.waves.RBAC
	case groupWebhooks:
		return s.waves.Webhooks
	case groupCRs:
		return s.waves.CRs
	}
	return s.waves.Operator
}

// setOptions merges the sync options n calls for, as group g, into its
// sync-options annotation.
func (s *SyncWaveSteps) setOptions(n *yaml.RNode, g waveGroup, defined map[groupKind][]string) error {
	var opts []string
	if g == groupCRDs && isCRD(n) && s.keepCRDs {
		opts = append(opts, OptDeleteFalse, OptPruneFalse)
	}
	if _, ok := defined[gkOf(n)]; g == groupCRs && !ok {
		opts = append(opts, OptSkipDryRun)
	}
	// The previous version's ServiceAccounts and RBAC go last, once the new
	// operator's Deployment is healthy: OLM's RBAC names hash their rules, so
	// a bump renames them, and Argo CD prunes in an object's own wave, before
	// the operator wave rolls the old Pod, whose operator then runs without its
	// permissions (cert-manager-operator 1.19.1, bumped to 1.20.0 through Argo
	// CD: forbidden on its own CertManager, Issuers, ClusterRoles, ... until
	// its Pod went). OLM v0 too keeps the old CSV's RBAC until the new one
	// succeeds.
	if g == groupRBACObjects {
		opts = append(opts, OptPruneLast)
	}
	// CRDs always take server-side apply: cert-manager (or service-ca)
	// injects caBundle into CRDs with conversion webhooks, and SSA leaves that
	// field to its injector instead of fighting over it; and a CRD that grows
	// past the client-side limit in a later version needs no change of apply
	// method mid-life. Other objects take it when client-side apply would
	// fail. Measure last, with every other annotation in place.
	// A user who chose Replace=true (by a patch) picked the other way around
	// the size limit; we do not add a second apply method.
	needSSA := isCRD(n) && !hasSyncOption(n, "Replace")
	if !needSSA && !hasSyncOption(n, "Replace") {
		size, err := lastAppliedSize(n)
		if err != nil {
			return err
		}
		needSSA = size > MaxAnnotationsSize-SSAMargin
	}
	if needSSA {
		opts = append([]string{OptServerSideApply}, opts...)
	}
	return mergeSyncOptions(n, opts)
}

// mergeSyncOptions adds opts to n's sync-options annotation, skipping the
// options whose key (the part before '=') is already set there.
func mergeSyncOptions(n *yaml.RNode, opts []string) error {
	if len(opts) == 0 {
		return nil
	}
	old, had := n.GetAnnotations(SyncOptionsAnnotation)[SyncOptionsAnnotation]
	var merged []string
	keys := map[string]bool{}
	for _, o := range strings.Split(old, ",") {
		if o = strings.TrimSpace(o); o != "" {
			merged = append(merged, o)
			k, _, _ := strings.Cut(o, "=")
			keys[k] = true
		}
	}
	for _, o := range opts {
		if k, _, _ := strings.Cut(o, "="); !keys[k] {
			merged = append(merged, o)
			keys[k] = true
		}
	}
	v := strings.Join(merged, ",")
	if had && v == old {
		return nil
	}
	return n.PipeE(yaml.SetAnnotation(SyncOptionsAnnotation, v))
}

// lastAppliedSize returns the size of n's annotations, in the API server's
// count (sum of key and value lengths), once client-side apply has added
// last-applied-configuration: kubectl sets it to the object's JSON without that
// annotation, as encoding/json writes it (HTML characters escaped) plus the
// newline of json.Encoder.
func lastAppliedSize(n *yaml.RNode) (int, error) {
	obj := n
	ann := n.GetAnnotations()
	if _, ok := ann[lastAppliedConfigKey]; ok {
		obj = n.Copy()
		if err := obj.PipeE(yaml.ClearAnnotation(lastAppliedConfigKey)); err != nil {
			return 0, err
		}
		delete(ann, lastAppliedConfigKey)
	}
	j, err := jsonSize(obj.YNode())
	if err != nil {
		return 0, err
	}
	size := len(lastAppliedConfigKey) + j + 1
	for k, v := range ann {
		size += len(k) + len(v)
	}
	return size, nil
}

// hasSyncOption reports whether n's sync-options annotation sets key.
func hasSyncOption(n *yaml.RNode, key string) bool {
	for _, o := range strings.Split(n.GetAnnotations(SyncOptionsAnnotation)[SyncOptionsAnnotation], ",") {
		if k, _, _ := strings.Cut(strings.TrimSpace(o), "="); k == key {
			return true
		}
	}
	return false
}
