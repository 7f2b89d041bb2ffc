package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// CheckNamed refuses a path named by --apps-from that Scan would pass over
// without a word: a symbolic link (never followed), a file that is not a
// regular one (a device, a FIFO), a manifest over the scan's size bound
// (a larger file met in a tree is skipped), or one it cannot parse.
// Inside a named directory such files are skipped, as in a repository scan.
func CheckNamed(appsFrom []string) error {
	for _, a := range appsFrom {
		fi, err := os.Lstat(a)
		switch {
		case err != nil:
			return fmt.Errorf("--apps-from %s: no such file or directory", echo.Quote(a))
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("--apps-from %s is a symbolic link, which the search for Argo CD manifests does not follow: give the file or directory it points to (inside the repository)", echo.Quote(a))
		case fi.IsDir():
		case !fi.Mode().IsRegular():
			return fmt.Errorf("--apps-from %s is not a regular file: give Argo CD manifests (YAML files) or a directory of them", echo.Quote(a))
		case fi.Size() > maxScanFileBytes:
			return fmt.Errorf("--apps-from %s is %d bytes, over the %d-byte bound of one Argo CD manifest: split it, or give the files that hold the Applications", echo.Quote(a), fi.Size(), maxScanFileBytes)
		}
		if fi.Mode().IsRegular() {
			// A manifest the scan cannot parse (bad YAML, an alias bomb) is
			// skipped in a tree; named by itself it must say so.
			data, err := os.ReadFile(a)
			if err != nil {
				return fmt.Errorf("--apps-from %s: %s", echo.Quote(a), echo.Short(err.Error()))
			}
			if bytes.Contains(data, []byte("argoproj.io")) {
				if _, err := yamlsafe.Parse(data); err != nil {
					return fmt.Errorf("--apps-from %s: not YAML olm-cmp reads (%s): fix the manifest, or leave it out", echo.Quote(a), echo.Short(err.Error()))
				}
			}
		}
	}
	return nil
}

// ScanNamed scans the manifests --apps-from names (appsFrom, each checked
// by CheckNamed) in the repository holding dir; nil without any.
func ScanNamed(ctx context.Context, dir string, appsFrom []string) (*Index, error) {
	if len(appsFrom) == 0 {
		return nil, nil
	}
	if err := CheckNamed(appsFrom); err != nil {
		return nil, err
	}
	root, err := RepoRoot(dir)
	if err != nil {
		return nil, err
	}
	return Scan(ctx, root, appsFrom...)
}
