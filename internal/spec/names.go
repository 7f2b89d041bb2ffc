package spec

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// dns1123Label returns "" for a valid namespace name, else why it is not.
func dns1123Label(s string) string {
	return strings.Join(validation.IsDNS1123Label(s), "; ")
}

// dns1123Subdomain returns "" for a valid object name, else why it is not.
func dns1123Subdomain(s string) string {
	return strings.Join(validation.IsDNS1123Subdomain(s), "; ")
}
