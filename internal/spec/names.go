package spec

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Kubernetes' validation decides what is a valid name; its messages end in
// the regular expression it used, which is not how a user fixes a name, so
// the words here replace them, with the name the user probably meant.

// dns1123Label returns "" for a valid namespace name, else why it is not
// and the fix.
func dns1123Label(s string) string {
	if len(validation.IsDNS1123Label(s)) == 0 {
		return ""
	}
	return nameFix(s, validation.DNS1123LabelMaxLength, false, "not a valid namespace name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters")
}

// dns1123Subdomain returns "" for a valid object name, else why it is not
// and the fix.
func dns1123Subdomain(s string) string {
	if len(validation.IsDNS1123Subdomain(s)) == 0 {
		return ""
	}
	return nameFix(s, validation.DNS1123SubdomainMaxLength, true, "not a valid name: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters")
}

// nameFix appends `(e.g. "fixed")` to why when s can be turned into a valid
// name by lower-casing it and replacing what a name cannot hold by '-'.
func nameFix(s string, maxLen int, dots bool, why string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9', r == '.' && dots:
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	fixed := strings.Trim(b.String(), "-.")
	if fixed == "" || len(fixed) > maxLen || fixed == s {
		return why
	}
	if dots && len(validation.IsDNS1123Subdomain(fixed)) > 0 || !dots && len(validation.IsDNS1123Label(fixed)) > 0 {
		return why
	}
	return fmt.Sprintf("%s, e.g. %q", why, fixed)
}
