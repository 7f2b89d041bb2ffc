package initspec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// CheckDir says why init cannot write into dir, before any work is done:
// dir must be an existing directory (init creates nothing but the file),
// and without force must not hold a spec already. A spec that is a symbolic
// link is never replaced: what it leads to may be shared. olm-cmp.yml beside
// it would be read as an extra manifest, so it is refused too.
func CheckDir(dir string, force bool) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--dir %s: no such directory: create it first (mkdir -p %s)", dir, dir)
	case err != nil:
		return fmt.Errorf("--dir %s: %w", dir, errors.Unwrap(err))
	case !fi.IsDir():
		return fmt.Errorf("--dir %s: not a directory: give the directory to write %s into", dir, spec.FileName)
	}
	if _, err := os.Lstat(filepath.Join(dir, "olm-cmp.yml")); err == nil {
		return fmt.Errorf("%s exists: olm-cmp reads %s (and would read olm-cmp.yml as an extra manifest): rename or remove it first", filepath.Join(dir, "olm-cmp.yml"), spec.FileName)
	}
	file := filepath.Join(dir, spec.FileName)
	li, err := os.Lstat(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", file, errors.Unwrap(err))
	case li.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: init does not write through it (what it leads to may be shared): remove the link first", file)
	case !li.Mode().IsRegular():
		return fmt.Errorf("%s exists and is not a regular file: remove it first", file)
	case !force:
		return fmt.Errorf("%s exists: init never overwrites a spec; give --force to replace it, or -d another directory", file)
	}
	return nil
}

// Write puts data in dir/olm-cmp.yaml atomically: a temporary file in dir,
// synced, then linked into place (which fails if the file has appeared
// meanwhile) or, with force, renamed over the old one. A reader sees no
// file, the old one or the whole new one; nothing else is left behind.
func Write(dir string, data []byte, force bool) (string, error) {
	if err := CheckDir(dir, force); err != nil {
		return "", err
	}
	file := filepath.Join(dir, spec.FileName)
	tmp, err := os.CreateTemp(dir, "."+spec.FileName+".*")
	if err != nil {
		return "", fmt.Errorf("cannot write in %s (%w): give -d a directory you can write to", dir, errors.Unwrap(err))
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", file, err)
	}
	if force {
		err = os.Rename(tmp.Name(), file)
	} else if err = os.Link(tmp.Name(), file); errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("%s appeared while init ran: it was left as it is; give --force to replace it", file)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		// A filesystem without hard links: the check above is the guard.
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", file, err)
	}
	return file, nil
}
