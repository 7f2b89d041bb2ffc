// Package apicheck makes, in olm-cmp-check, the checks of internal/validate
// that need the API server's own libraries (apiextensions-apiserver's CRD
// validation, its custom-resource pruning, defaulting and schema
// validation, the apiserver's webhook URL rules): linked into olm-cmp, their
// package initialisation (CEL, kube-openapi's validators, the apiserver's
// metrics registries) was a third of every process's start-up
// (internal/checkproc says why they run in a second process).
//
// Its operations are internal/validate/apiop's: each takes its input as
// JSON and returns an apiop.Verdict, its problems worded as
// internal/validate's lines word them (internal/validate/fieldtext).
// Each is a pure function of its input, so internal/validate caches the
// verdicts by content and a warm render never starts olm-cmp-check.
package apicheck

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// Handlers returns apicheck's operations by name, for internal/checks.
func Handlers() map[string]checkproc.Handler {
	return map[string]checkproc.Handler{
		apiop.CRD: func(_ context.Context, in json.RawMessage) (any, error) {
			return verdict(checkCRD(in)), nil
		},
		apiop.CustomResources: func(ctx context.Context, in json.RawMessage) (any, error) {
			var crs apiop.CustomResourcesInput
			if err := strictJSON(in, &crs); err != nil {
				return nil, err
			}
			return customResources(ctx, &crs), nil
		},
		apiop.WebhookClientConfig: func(_ context.Context, in json.RawMessage) (any, error) {
			var w apiop.WebhookInput
			if err := strictJSON(in, &w); err != nil {
				return nil, err
			}
			return verdict(webhookClientConfig(&w)), nil
		},
	}
}

// verdict is a check's problems as its Verdict, cut at apiop.MaxProblems
// (a custom resource with 70 unknown fields is 70 problems).
func verdict(problems []string) apiop.Verdict {
	return apiop.Verdict{Problems: fieldtext.Cut(problems, apiop.MaxProblems-1)}
}

// strictJSON decodes an operation's input, refusing what olm-cmp would not
// have sent (another build's input).
func strictJSON(in json.RawMessage, v any) error {
	if err := json.Unmarshal(in, v); err != nil {
		return fmt.Errorf("%s got an input it cannot read (%v): is it the same build as olm-cmp?", checkproc.Executable, err)
	}
	return nil
}

// scheme and decoder decode a CRD as the API server decodes a request with
// fieldValidation=Strict: apiextensions.k8s.io/v1 only, v1's defaults
// registered.
var (
	scheme = sync.OnceValue(func() *runtime.Scheme {
		s := runtime.NewScheme()
		if err := apiextensionsv1.AddToScheme(s); err != nil {
			panic(err) // static registration: cannot fail at run time
		}
		return s
	})
	decoder = sync.OnceValue(func() *jsonserializer.Serializer {
		return jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, scheme(), scheme(), jsonserializer.SerializerOptions{Strict: true})
	})
)
