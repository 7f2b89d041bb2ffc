// Package bundle loads OLM registry+v1 bundles (manifests/ + metadata/) from a
// directory or an OCI image, and caches extracted images on disk by digest. It
// also pulls file-based catalog images, from which the catalog package
// chooses a bundle.
package bundle

import (
	"encoding/json"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Bundle is a loaded registry+v1 bundle. Manifests other than the CSV are kept
// as kyaml nodes exactly as read, so `{}` values, key order and CRD
// subresources survive the conversion untouched.
//
// A loaded Bundle is read-only: renders (render.RenderBundle) copy what they
// change and never modify it, so one Bundle may be rendered by many requests
// at once, and a bundle shared by several callers is loaded once.
type Bundle struct {
	// Package is the OLM package name from metadata/annotations.yaml.
	Package string
	// Annotations are the entries of metadata/annotations.yaml.
	Annotations map[string]string
	// CSV is the ClusterServiceVersion, decoded into OLM's own types. It is
	// never nil in a loaded bundle: the loader refuses a bundle without one
	// (convert.Validate and render's pipeline check it at their boundaries,
	// for Bundles built by hand).
	CSV *v1alpha1.ClusterServiceVersion
	// CSVFile is the manifests/ file the CSV came from (for error messages).
	CSVFile string
	// CRDs are the CustomResourceDefinitions, in file order.
	CRDs []Object
	// Others are every other object of manifests/, in file order.
	Others []Object
	// Properties are metadata/properties.yaml's entries (may be empty). As in
	// OLM, they are also appended to the CSV's olm.properties annotation.
	Properties []Property
	// Dependencies are metadata/dependencies.yaml's entries (may be empty).
	// OLM v1 refuses bundles that need other packages, so the renderer can
	// warn about them; they have the same type/value shape as properties.
	Dependencies []Property
	// DependenciesUnreadable says why metadata/dependencies.yaml could not
	// be read ("line 22: did not find expected key"), empty when it was read
	// or is absent. Dependencies are then unknown, not none: OLM v1 never
	// reads the file to render, so the load goes on and the requirements
	// report says so.
	DependenciesUnreadable string
	// Warnings are what the load accepted, as OLM v1 does, but a user
	// should hear about, one line each naming the bundle file and line: a
	// key a file writes twice with the same value (kept once).
	Warnings []string
	// Files are the files of manifests/ (bundle-relative, sorted), skipped
	// ones included.
	Files []string
	// SkippedFiles are the files of manifests/ the load left unread, as
	// Origin.SkipFiles asked.
	SkippedFiles []string
	// Origin says where the bundle came from.
	Origin Origin
}

// Object is one manifest object and the bundle file it was read from.
type Object struct {
	File string
	*yaml.RNode
}

// Property is one OLM property (metadata/properties.yaml or the CSV's olm.properties).
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// Origin identifies a bundle's source. For images Digest pins the content; for
// directories Digest is a content hash, so caches can key on it either way.
type Origin struct {
	// Ref is what the user named: a directory path or an image reference.
	Ref string
	// Image is the image reference pinned by digest (repo@sha256:…); empty for directories.
	Image string
	// Digest is the image manifest digest, or for a directory a sha256 of its bundle files.
	Digest string
	// Dir is the local directory the bundle files were read from.
	Dir string
	// SkipFiles are files of manifests/ ("manifests/broken.yaml") the
	// loader reads for the digest but never parses (spec.excludeFiles): a
	// request's choice, not part of the bundle's identity.
	SkipFiles []string
}

// ObjectID names an object the way the API server tells objects apart: kind,
// API group, namespace and name, as "Kind.group namespace/name" ("Kind. name"
// for a cluster-scoped object of the core group). Every de-duplication and
// every message about two objects being one uses it.
func ObjectID(n *yaml.RNode) string {
	group, _, found := strings.Cut(n.GetApiVersion(), "/")
	if !found {
		group = "" // core group: "v1"
	}
	return n.GetKind() + "." + group + " " + strings.TrimPrefix(n.GetNamespace()+"/"+n.GetName(), "/")
}
