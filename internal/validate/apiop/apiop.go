// Package apiop is the contract between internal/validate, which asks, and
// internal/validate/apicheck, which answers in olm-cmp-check: the names of
// the checks only the API server's own libraries make, their inputs and
// their one output, a Verdict. It stays light (the standard library only),
// so olm-cmp links it without those libraries.
//
// Every check is a pure function of its input: its verdict is cached by
// the input's content (internal/checkproc's Store).
package apiop

import "encoding/json"

// The operations apicheck registers in olm-cmp-check.
const (
	// CRD checks a CustomResourceDefinition as kube-apiserver does on
	// create. Input: the CRD as JSON.
	CRD = "crd"
	// CustomResource checks a custom resource against one served version
	// of the CRD the render ships for it. Input: CustomResourceInput.
	CustomResource = "custom-resource"
	// WebhookClientConfig checks an admission webhook's clientConfig URL or
	// service. Input: WebhookInput.
	WebhookClientConfig = "webhook-client-config"
)

// CustomResourceInput is what the API server's handling of a custom
// resource reads: its kind (for the name rule), the version's schema and
// whether the CRD prunes, and the object.
type CustomResourceInput struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Schema is the version's openAPIV3Schema as the CRD's v1 form writes
	// it, or null when the version has none.
	Schema json.RawMessage `json:"schema"`
	// PreserveUnknownFields is the CRD's spec.preserveUnknownFields: true
	// prunes nothing.
	PreserveUnknownFields bool            `json:"preserveUnknownFields"`
	Object                json.RawMessage `json:"object"`
}

// WebhookInput is the clientConfig of webhooks[Index] of an admission
// webhook configuration, when it has a URL or a service (not both, not
// neither: internal/validate says so itself).
type WebhookInput struct {
	Index   int             `json:"index"`
	URL     *string         `json:"url,omitempty"`
	Service *WebhookService `json:"service,omitempty"`
}

// WebhookService is a clientConfig's service, its port defaulted (443).
type WebhookService struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Path      *string `json:"path,omitempty"`
	Port      int32   `json:"port"`
}

// Verdict is every operation's output: the problems found, each worded as
// the render's error line says it (internal/validate/fieldtext); none when
// the input passes.
type Verdict struct {
	Problems []string `json:"problems"`
}
