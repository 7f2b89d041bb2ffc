package specedit

import (
	"os"
	"path/filepath"
)

// WriteFile replaces file with data through a temporary file in the same
// directory and a rename, keeping its permissions: a reader (Argo CD, an
// editor) sees the old file or the new one, never half of one. A symbolic
// link is written through: its target is replaced (the link stays a link,
// and what it is shared with is what gets pinned); target is the file
// written.
func WriteFile(file string, data []byte) (target string, err error) {
	target = file
	if li, err := os.Lstat(file); err == nil && li.Mode()&os.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(file); err != nil {
			return "", err
		}
		if abs, err := filepath.Abs(target); err == nil {
			target = abs
		}
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return target, os.Rename(tmp.Name(), target)
}
