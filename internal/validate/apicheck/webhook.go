package apicheck

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"

	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// webhookClientConfig is admissionregistration's check of a webhook's
// clientConfig on create: a URL must be https, with a host and without
// user info, a query or a fragment; a service's name and namespace must be
// DNS names, its path a clean absolute one, its port a port.
func webhookClientConfig(in *apiop.WebhookInput) []string {
	p := field.NewPath("webhooks").Index(in.Index).Child("clientConfig")
	switch {
	case in.URL != nil:
		return fieldtext.Lines(webhook.ValidateWebhookURL(p.Child("url"), *in.URL, true))
	case in.Service != nil:
		s := in.Service
		return fieldtext.Lines(webhook.ValidateWebhookService(p.Child("service"), s.Namespace, s.Name, s.Path, s.Port))
	}
	return nil
}
