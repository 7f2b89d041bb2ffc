package cmpserver

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/olm-cmp/olm-cmp/internal/registry"
)

// TestRegistryCode: a registry failure reaches Argo CD with a code that says
// whether waiting helps (Unavailable) or the reference or credentials must
// change; other render errors stay InvalidArgument.
func TestRegistryCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want codes.Code
		ok   bool
	}{
		{&registry.Error{Reason: registry.ReasonTimeout}, codes.Unavailable, true},
		{&registry.Error{Reason: registry.ReasonReset}, codes.Unavailable, true},
		{&registry.Error{Reason: registry.ReasonStatus, Status: 503}, codes.Unavailable, true},
		{&registry.Error{Reason: registry.ReasonStatus, Status: 429}, codes.Unavailable, true},
		{&registry.Error{Reason: registry.ReasonStatus, Status: 404}, codes.NotFound, true},
		{&registry.Error{Reason: registry.ReasonStatus, Status: 403}, codes.PermissionDenied, true},
		{fmt.Errorf("spec.bundle: %w", &registry.Error{Reason: registry.ReasonStatus, Status: 401}), codes.Unauthenticated, true},
		{&registry.Error{Reason: registry.ReasonStatus, Status: 400}, 0, false},
		{errors.New("spec.namespace: required"), 0, false},
	} {
		got, ok := registryCode(c.err)
		if got != c.want || ok != c.ok {
			t.Errorf("%v: got %v %v, want %v %v", c.err, got, ok, c.want, c.ok)
		}
	}
}
