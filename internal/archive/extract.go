package archive

import (
	"context"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"
)

// Extractor writes archives into one directory, in order, sharing their
// limits: the layers of one image (a later layer replaces and whites out
// what earlier ones wrote), or one repository tarball. Files are created
// through an os.Root, with modes 0644 and directories 0755 whatever the
// archive says. An Extractor is not safe for concurrent use.
type Extractor struct {
	root *os.Root
	w    *walker
	// written holds what the current archive wrote, with the parents of
	// each name: what an opaque whiteout must keep (whiteouts apply to
	// earlier archives only).
	written map[string]bool
}

// NewExtractor returns an Extractor writing into dir, which must exist.
func NewExtractor(dir string, opts Options) (*Extractor, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Extractor{root: root, w: newWalker(opts)}, nil
}

// Close releases the destination directory.
func (x *Extractor) Close() error { return x.root.Close() }

// Extract reads one archive from r to its end and writes what it keeps. If
// sum is not nil it receives every decompressed byte (an OCI layer's diffID
// is their SHA-256). On error the destination holds part of the archive:
// the caller discards it.
func (x *Extractor) Extract(ctx context.Context, r io.Reader, sum hash.Hash) error {
	x.written = map[string]bool{}
	if err := x.w.walk(ctx, r, sum, x.apply); err != nil {
		return err
	}
	if x.w.opts.Links == LinksInside {
		return x.resolveLinks()
	}
	return nil
}

func (x *Extractor) apply(e Entry, body io.Reader) error {
	switch e.Kind {
	case Dir:
		if err := x.replaceUnless(e.Name, true); err != nil {
			return err
		}
		if err := x.root.MkdirAll(e.Name, 0o755); err != nil {
			return entryFailed(e, err)
		}
	case File:
		if err := x.parent(e); err != nil {
			return err
		}
		if err := x.replaceUnless(e.Name, false); err != nil {
			return err
		}
		if err := x.writeFile(e, body); err != nil {
			return entryFailed(e, err)
		}
	case Symlink:
		if err := x.parent(e); err != nil {
			return err
		}
		if err := x.root.RemoveAll(e.Name); err != nil { // a later entry wins, as with tar
			return entryFailed(e, err)
		}
		if err := x.root.Symlink(e.Linkname, e.Name); err != nil {
			return entryFailed(e, err)
		}
	case whiteout:
		if !x.written[e.Name] { // never what this archive wrote
			if err := x.root.RemoveAll(e.Name); err != nil {
				return entryFailed(e, err)
			}
		}
		return nil
	case opaque:
		return x.empty(e.Name)
	}
	x.mark(e.Name)
	return nil
}

func (x *Extractor) parent(e Entry) error {
	if dir := path.Dir(e.Name); dir != "." {
		if err := x.root.MkdirAll(dir, 0o755); err != nil {
			return entryFailed(e, err)
		}
	}
	return nil
}

// replaceUnless removes what is at name unless it is already a directory
// and dir is true: an entry replaces an earlier one of another type.
func (x *Extractor) replaceUnless(name string, dir bool) error {
	fi, err := x.root.Lstat(name)
	if err != nil || (dir && fi.IsDir()) || fi.Mode().IsRegular() {
		return nil // nothing there, or a directory to keep, or a file O_TRUNC replaces
	}
	return x.root.RemoveAll(name)
}

func (x *Extractor) writeFile(e Entry, body io.Reader) error {
	f, err := x.root.OpenFile(e.Name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, body, e.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (x *Extractor) mark(name string) {
	for ; name != "." && name != "" && !x.written[name]; name = path.Dir(name) {
		x.written[name] = true
	}
}

// empty removes below dir ("" for the destination) what earlier archives
// wrote, keeping what the current one wrote.
func (x *Extractor) empty(dir string) error {
	d := dir
	if d == "" {
		d = "."
	}
	f, err := x.root.Open(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil // not a directory: nothing below it to hide
	}
	for _, n := range names {
		p := path.Join(dir, n)
		if !x.written[p] {
			if err := x.root.RemoveAll(p); err != nil {
				return err
			}
		} else if fi, err := x.root.Lstat(p); err == nil && fi.IsDir() {
			if err := x.empty(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolveLinks resolves every symbolic link for real, through the root: the
// lexical check cannot see a ".." that follows another link in a target
// ("l1/../.."). A link that dangles is removed (nothing may be created
// behind it later); one that leaves the destination or loops refuses the
// archive.
func (x *Extractor) resolveLinks() error {
	names := make([]string, 0, len(x.w.links))
	for n := range x.w.links {
		names = append(names, n)
	}
	slices.Sort(names) // the same archive is refused for the same link
	for _, n := range names {
		_, err := x.root.Stat(n)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			if err := x.root.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		case errors.Is(err, syscall.ELOOP):
			return &EntryError{Name: n, Link: x.w.links[n], Reason: ErrLinkLoop, root: x.w.opts.root()}
		default: // os.Root refuses to leave the destination
			return &EntryError{Name: n, Link: x.w.links[n], Reason: ErrLinkOutside, root: x.w.opts.root()}
		}
	}
	return nil
}

// entryFailed names the entry in a write error; os.Root's errors name paths
// relative to the destination only.
func entryFailed(e Entry, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &writeError{name: e.Name, err: err}
}

type writeError struct {
	name string
	err  error
}

func (e *writeError) Error() string { return "writing " + e.name + ": " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }
