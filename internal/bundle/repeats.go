package bundle

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// dropRepeatedKeys removes the keys that the documents of a bundle file
// write twice with the same value (yamlsafe.DropRepeatedKeys) and returns
// the warning naming them, "" when there are none. A key written twice with
// different values is an error.
//
// Vendors ship such files (nlp-server 0.8.6 writes a RoleBinding's
// apiVersion twice) and OLM v1 installs them: its reader (cli-runtime's
// resource builder: apimachinery's YAMLOrJSONDecoder, sigs.k8s.io/yaml)
// keeps the last value of a repeated key without a word. With equal values
// the object is the same whichever one is kept, so the bundle renders, with
// a warning; with different values OLM v1 would install the last one
// silently, and the render is refused: nobody can tell which one the
// vendor meant, and the user cannot fix the vendor's file.
func dropRepeatedKeys(file string, docs []*yaml.Node) (string, error) {
	found, err := yamlsafe.DropRepeatedKeys(docs...)
	if err != nil {
		return "", repeatError(err)
	}
	return repeatsWarning(file, found), nil
}

// repeatError says why a key repeated with another value is refused.
func repeatError(err error) error {
	if ce := (*yamlsafe.ConflictError)(nil); errors.As(err, &ce) {
		return fmt.Errorf("%w: OLM v1 would install the last one without a word, and which one the vendor meant cannot be told", err)
	}
	return err
}

// repeatsWarning is one line for a file's repeated keys: the first in
// full, a few more by path and line; "" for none.
func repeatsWarning(file string, found []yamlsafe.RepeatedKey) string {
	const listed = 3
	if len(found) == 0 {
		return ""
	}
	r := found[0]
	msg := fmt.Sprintf("%s: line %d: %s is set twice to the same value (first on line %d)", file, r.Line, r.Path, r.First)
	if more := found[1:]; len(more) > 0 {
		var names []string
		for _, m := range more[:min(len(more), listed)] {
			names = append(names, fmt.Sprintf("%s on line %d", m.Path, m.Line))
		}
		if len(more) > listed {
			names = append(names, fmt.Sprintf("%d more", len(more)-listed))
		}
		msg += fmt.Sprintf(", and so are %d more keys (%s)", len(more), strings.Join(names, ", "))
	}
	return msg + ": rendered once, as OLM v1 installs it (the values are equal: the object is the same either way)"
}

// dropRepeatedMetadataKeys is dropRepeatedKeys for a file of metadata/:
// its warning joins b's; the error's fix is another bundle version, as no
// spec field skips a metadata file.
func dropRepeatedMetadataKeys(b *Bundle, file string, docs []*yaml.Node) error {
	warning, err := dropRepeatedKeys(file, docs)
	if err != nil {
		return fmt.Errorf("%w: use another bundle version, or ask its vendor to fix the file", err)
	}
	if warning != "" {
		b.Warnings = append(b.Warnings, warning)
	}
	return nil
}
