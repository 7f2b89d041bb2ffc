package bundle

import (
	"os"
	"path/filepath"
)

// LooksLike reports whether dir looks like a registry+v1 bundle: it holds
// metadata/annotations.yaml, the file that names its package. It is for a
// word about a bundle given where something else belongs (a source
// directory), not for loading: LoadDir judges a bundle whole.
func LooksLike(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(AnnotationsFile)))
	return err == nil && fi.Mode().IsRegular()
}
