package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// skipHint adds to a load error about one file of the bundle's manifests/
// (a bundle.FileError: it does not parse, an object lacks apiVersion or
// kind, an unowned v1beta1 CRD) the way past it the spec offers:
// spec.excludeFiles, which the loader honours before parsing. The vendor's
// file cannot be fixed by the user; skipping it can be right when the
// operator does not need its objects, and the loader refuses to skip the
// CSV or a CRD the CSV owns.
func skipHint(err error) error {
	var fe *bundle.FileError
	if !errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("%w; if the operator does not need the objects of %s, skip the file: spec.excludeFiles: [%s] (or use another bundle version)", err, fe.File, fe.File)
}

// checkExcludeFiles reports spec.excludeFiles entries that name no file of
// the bundle's manifests/: a warning, an error under spec.strict (an entry
// that skips nothing is a typo, or a fix the bundle no longer needs).
func checkExcludeFiles(p *pipeline, s spec.Spec, b *bundle.Bundle) error {
	var missing []string
	for _, f := range s.ExcludeFiles {
		if !slices.Contains(b.Files, f) && !slices.Contains(missing, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := fmt.Sprintf("spec.excludeFiles: %s: no such file in the bundle's manifests/ (it holds %s): the entry skips nothing; correct or remove it",
		strings.Join(missing, ", "), fewNames(b.Files))
	if s.Strict {
		return errors.New("strict: " + msg)
	}
	p.warn(msg)
	return nil
}
