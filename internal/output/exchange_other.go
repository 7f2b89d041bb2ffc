//go:build !linux

package output

import "errors"

// exchange is Linux's atomic swap of two directories; elsewhere
// replaceDir renames twice.
func exchange(_, _ string) error { return errors.ErrUnsupported }
