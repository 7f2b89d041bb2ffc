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
	// CustomResources checks the custom resources of one served version of
	// a CRD the render ships, each against that version's schema, which
	// the input carries once. Input: CustomResourcesInput. Output:
	// Verdicts, one per object, in order.
	CustomResources = "custom-resources"
	// WebhookClientConfig checks an admission webhook's clientConfig URL or
	// service. Input: WebhookInput.
	WebhookClientConfig = "webhook-client-config"
)

// CustomResourcesInput is what the API server's handling of a custom
// resource reads, for the custom resources of one served version of a CRD:
// their kind (for the name rule), the version's schema, whether the CRD
// prunes and whether the version has the status subresource, and the
// objects. The schema is sent once however many objects it judges (a 1.4
// MB schema sent with each of 330 custom resources made a request of
// 460 MB).
type CustomResourcesInput struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Schema is the version's openAPIV3Schema as the CRD's v1 form writes
	// it, or null when the version has none.
	Schema json.RawMessage `json:"schema"`
	// PreserveUnknownFields is the CRD's spec.preserveUnknownFields: true
	// prunes nothing.
	PreserveUnknownFields bool `json:"preserveUnknownFields"`
	// StatusSubresource is whether the version enables the status
	// subresource: the server then drops status on create, unchecked.
	StatusSubresource bool              `json:"statusSubresource"`
	Objects           []json.RawMessage `json:"objects"`
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

// Verdict is every other operation's output: the problems found, each worded as
// the render's error line says it (internal/validate/fieldtext); none when
// the input passes.
type Verdict struct {
	Problems []string `json:"problems"`
}

// Verdicts is CustomResources' output: a Verdict per object, in order.
type Verdicts struct {
	Verdicts []Verdict `json:"verdicts"`
}

// MaxProblems bounds a Verdict's problems: a check that finds more writes
// the first MaxProblems-1 and "and N more" (fieldtext.Cut).
const MaxProblems = 64
