// Package transform adapts the objects OLM's conversion produced to a cluster
// without OLM and to Argo CD: it adds objects, sets annotations, sync waves
// and options, applies the user's exclude, image rewrites and kustomize
// patches, drops what the cluster does not serve, checks that nothing the
// operator needs was dropped, and orders and serializes the result.
//
// Every step is a kio.Filter (kyaml's Filter([]*yaml.RNode) ([]*yaml.RNode, error))
// working on *yaml.RNode, which keeps comments, key order and `{}` through the
// whole pipeline. The order of work is a list, not control flow: Steps
// returns the standard list and Apply runs any list.
//
// # Order
//
// Steps runs, in this order (docs/spec.md, "Pipeline", lists the same steps):
//
//  1. Namespace, ServiceAccounts, ImagePullSecrets, BundleSubjects,
//     AuthReaderBinding, SettleHook: the objects olm-cmp adds (and the
//     bundle's bindings of its own ServiceAccounts, moved to the install
//     namespace), first, so that every spec field below reaches them.
//     ImagePullSecrets comes after ServiceAccounts (and the caller's examples
//     and extra manifests) so it covers every ServiceAccount.
//  2. Annotate: source annotations.
//  3. SyncWaves' WaveStep: waves and sync options, before the user's steps so
//     that patches see them and may change them (a wave already set is kept).
//  4. Exclude: the user's drops, now over every object, added ones included.
//  5. Images: prefix rewrites, before Patches so a patch may change a
//     rewritten image.
//  6. Patches: the user's patches see every object as rendered, annotations
//     included, and a patch that matches nothing is an error whatever the
//     cluster.
//  7. APIVersions: drops what the cluster does not serve; after Patches, so
//     whether a patch or an exclude matches never depends on the cluster.
//  8. RequiredObjects: fails when a step above dropped an object that a kept
//     object needs (the reference graph of requires.go).
//  9. LiveForm: what the cluster drops or owns (CRD fields the API server
//     does not store, aggregated ClusterRoles' rules) is left out,
//     after Patches so that it also covers what a patch or an extra manifest
//     brings, and before OptionsStep, which measures the final size.
//  10. SyncWaves' OptionsStep: the sync options decided again on the final
//     objects (a CRD excluded, a patch that grew an object past the
//     client-side apply limit); options a patch set win key by key.
//  11. Sort: hooks last.
//
// Examples (the CSV's alm-examples) and the user's extra manifests are not
// filters: the caller appends them to the objects before running Steps, and
// marks them with MarkCR so SyncWaves puts them in the custom-resource wave.
package transform

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Options are the inputs of the standard filter list.
type Options struct {
	// Namespace is the install namespace.
	Namespace string
	// SuggestedNamespace is the CSV's operatorframework.io/suggested-namespace
	// (see BundleSubjects).
	SuggestedNamespace string
	// CreateNamespace adds the Namespace object.
	CreateNamespace bool
	// NamespaceLabels and NamespaceAnnotations go on the install Namespace
	// (see NamespaceMetadata).
	NamespaceLabels, NamespaceAnnotations map[string]string
	// Exclude are [group/]Kind[/name] selectors (see Exclude).
	Exclude []string
	// ServiceAccounts are extra ServiceAccounts to create.
	ServiceAccounts []string
	// ImagePullSecrets are Secret names added to every ServiceAccount.
	ImagePullSecrets []string
	// AuthReaderBinding, when not empty, is the base name of the kube-system
	// RoleBinding to extension-apiserver-authentication-reader.
	AuthReaderBinding string
	// Images are prefix rewrites (see Images).
	Images map[string]string
	// Patches are the user's kustomize patches; ReadFile loads their paths.
	Patches  []kustomizetypes.Patch
	ReadFile func(path string) ([]byte, error)
	// APIVersions, when not empty, are what the cluster serves (see APIVersions).
	APIVersions []string
	// Annotations are added to every object, in key order.
	Annotations map[string]string
	// Waves and KeepCRDs configure SyncWaves.
	Waves    spec.Waves
	KeepCRDs bool
	// SettleHook, when not empty, names the PostSync hook ConfigMap (see
	// SettleHook), in Namespace.
	SettleHook string
	// Warn receives warnings; nil drops them.
	Warn func(string)
	// Unmatched receives one message per spec entry that selected nothing
	// (an exclude selector, an images prefix, a patch's deletion): a
	// warning, which render turns into an error under spec.strict. nil
	// sends them to Warn.
	Unmatched func(string)
}

// unmatched is where the no-op messages go (see Options.Unmatched).
func (o Options) unmatched() func(string) {
	if o.Unmatched != nil {
		return o.Unmatched
	}
	return o.Warn
}

// Step is one named filter of the ordered list render runs; the names are
// the ones docs/spec.md lists under "Pipeline".
type Step struct {
	Name string
	kio.Filter
}

// Steps returns the filters for o, in the order they run (see the package
// documentation for why this order).
func Steps(o Options) []Step {
	var steps []Step
	if o.CreateNamespace {
		steps = append(steps, Step{"namespace", Namespace(o.Namespace)})
	}
	if len(o.NamespaceLabels) > 0 || len(o.NamespaceAnnotations) > 0 {
		steps = append(steps, Step{"namespace", NamespaceMetadata(o.Namespace, o.NamespaceLabels, o.NamespaceAnnotations, o.Warn, o.unmatched())})
	}
	steps = append(steps,
		Step{"service accounts", ServiceAccounts(o.Namespace, o.ServiceAccounts, o.ImagePullSecrets)},
		Step{"image pull secrets", ImagePullSecrets(o.ImagePullSecrets)},
		Step{"bundle subjects", BundleSubjects(o.Namespace, o.SuggestedNamespace, o.Warn)},
	)
	if o.AuthReaderBinding != "" {
		steps = append(steps, Step{"auth-reader binding", AuthReaderBinding(o.Namespace, o.AuthReaderBinding)})
	}
	if o.SettleHook != "" {
		steps = append(steps, Step{"settle hook", SettleHook(o.Namespace, o.SettleHook)})
	}
	for _, k := range slices.Sorted(maps.Keys(o.Annotations)) {
		steps = append(steps, Step{"annotations", Annotate(k, o.Annotations[k])})
	}
	waves := NewSyncWaves(o.Waves, o.KeepCRDs)
	drops := &Drops{served: o.APIVersions}
	return append(steps,
		Step{"sync waves", waves.WaveStep()},
		Step{"exclude", excludeRecording(o.Exclude, o.unmatched(), drops)},
		Step{"images", imagesReporting(o.Images, o.unmatched())},
		Step{"patches", patchesRecording(o.Patches, o.ReadFile, drops, o.unmatched())},
		Step{"API versions", apiVersionsRecording(o.APIVersions, o.Warn, drops)},
		Step{"required objects", RequiredObjects(drops, o.Warn)},
		Step{"live form", LiveForm(o.Warn)},
		Step{"sync options", waves.OptionsStep()},
		Step{"sort", Sort()},
	)
}

// Apply runs filters over nodes in order and returns the result.
func Apply(nodes []*yaml.RNode, filters ...kio.Filter) ([]*yaml.RNode, error) {
	var err error
	for _, f := range filters {
		if nodes, err = f.Filter(nodes); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// Group names used to classify objects.
const (
	groupCore          = ""
	groupApps          = "apps"
	groupBatch         = "batch"
	groupRBAC          = "rbac.authorization.k8s.io"
	groupAPIExtensions = "apiextensions.k8s.io"
	groupAdmission     = "admissionregistration.k8s.io"
	groupAPIRegistry   = "apiregistration.k8s.io"
)

// groupKind identifies a kind of object independent of its version.
type groupKind struct{ Group, Kind string }

func (gk groupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Group + "/" + gk.Kind
}

// gkOf returns the group and kind of n.
func gkOf(n *yaml.RNode) groupKind {
	g, _ := resid.ParseGroupVersion(n.GetApiVersion())
	return groupKind{g, n.GetKind()}
}

// objectKey identifies an object within a render: group, kind, namespace
// and name.
func objectKey(n *yaml.RNode) string {
	return gkOf(n).String() + "|" + n.GetNamespace() + "|" + n.GetName()
}

// describe names an object in messages: "apps/Deployment ns/name".
func describe(n *yaml.RNode) string {
	id := n.GetName()
	if ns := n.GetNamespace(); ns != "" {
		id = ns + "/" + id
	}
	return gkOf(n).String() + " " + id
}

// builtinGroups are the API groups Kubernetes itself serves (no CRD defines
// them). A group ending in .k8s.io is not enough: gateway.networking.k8s.io and
// snapshot.storage.k8s.io are CRDs.
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "extensions": true,
	"admissionregistration.k8s.io": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true,
	"authentication.k8s.io": true, "authorization.k8s.io": true, "certificates.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true,
	"flowcontrol.apiserver.k8s.io": true, "internal.apiserver.k8s.io": true, "networking.k8s.io": true,
	"node.k8s.io": true, "rbac.authorization.k8s.io": true, "resource.k8s.io": true,
	"scheduling.k8s.io": true, "storage.k8s.io": true, "storagemigration.k8s.io": true,
}

// crdKinds returns the group/kinds defined by the CRDs among nodes, each with
// the versions the CRD lists.
func crdKinds(nodes []*yaml.RNode) map[groupKind][]string {
	out := map[groupKind][]string{}
	for _, n := range nodes {
		if !isCRD(n) {
			continue
		}
		group, _ := n.GetString("spec.group")
		kind, _ := n.GetString("spec.names.kind")
		if kind == "" {
			continue
		}
		gk := groupKind{group, kind}
		out[gk] = append(out[gk], crdVersions(n)...)
	}
	return out
}

// crdVersions lists spec.versions[].name (and the v1beta1 spec.version).
func crdVersions(n *yaml.RNode) []string {
	var vs []string
	if v, _ := n.GetString("spec.version"); v != "" {
		vs = append(vs, v)
	}
	if seq, _ := n.Pipe(yaml.Lookup("spec", "versions")); seq != nil {
		els, _ := seq.Elements()
		for _, e := range els {
			if v, _ := e.GetString("name"); v != "" {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

func isCRD(n *yaml.RNode) bool {
	return gkOf(n) == groupKind{groupAPIExtensions, "CustomResourceDefinition"}
}

// sortedNames returns the distinct non-empty names of in, sorted: inputs that
// spec.Normalized treats as sets must render the same whatever their order.
func sortedNames(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// newObject returns a block-style object with apiVersion, kind and metadata.
func newObject(apiVersion, kind, namespace, name string) (*yaml.RNode, error) {
	n := yaml.NewRNode(&yaml.Node{Kind: yaml.MappingNode})
	n.SetApiVersion(apiVersion)
	n.SetKind(kind)
	if err := n.PipeE(yaml.SetK8sName(name)); err != nil {
		return nil, err
	}
	if err := setNamespace(n, namespace); err != nil {
		return nil, err
	}
	return n, nil
}

// setNamespace sets metadata.namespace as a string (a namespace named "123"
// stays a string), or removes it when ns is empty.
func setNamespace(n *yaml.RNode, ns string) error {
	if ns == "" {
		return n.PipeE(yaml.Lookup(yaml.MetadataField), yaml.Clear(yaml.NamespaceField))
	}
	return n.PipeE(yaml.SetK8sNamespace(ns))
}

// warnf calls warn, if any, with a formatted message.
func warnf(warn func(string), format string, a ...any) {
	if warn != nil {
		warn(fmt.Sprintf(format, a...))
	}
}
