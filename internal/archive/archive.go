// Package archive is the one place olm-cmp turns an untrusted tar stream
// into files: the layers of bundle and catalog images, and the repository
// tarball Argo CD streams to the plugin. Every entry is checked before
// anything is written, files are created through an os.Root on the
// destination (so even a mistake here cannot write outside it), and every
// byte and entry the stream holds is counted against limits set by the
// caller, so a decompression bomb is refused early, with memory and disk
// bounded.
//
// The two callers differ only in their Options: image layers keep part of
// the image (Select), refuse every link (NoLinks) and apply whiteouts;
// repository tarballs keep everything and allow symbolic links that resolve
// inside the repository (LinksInside).
package archive

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Compression says how an archive's bytes are compressed.
type Compression int

const (
	// Gzip: the stream must be a gzip-compressed tar (Argo CD's repository
	// tarball).
	Gzip Compression = iota
	// Detect tells gzip, zstd and an uncompressed tar apart by their first
	// bytes: an OCI layer may be any of them whatever its media type says.
	Detect
)

// Links says which links an archive may hold among its kept entries.
type Links int

const (
	// NoLinks refuses every link, symbolic or hard: image layers. A bundle
	// or catalog never needs one, and skipping it would silently lose a
	// file.
	NoLinks Links = iota
	// LinksInside keeps symbolic links whose target resolves inside the
	// destination (a repository sharing files between applications). Hard
	// links, links that leave the destination (lexically at once, for real
	// once every entry is written), entries below a link and files replacing
	// a link are refused; a link left dangling is removed.
	LinksInside
)

// Limits bound what archives may make the walker read and write. They are
// counted across every archive an Extractor reads (all the layers of one
// image). MaxBytes and MaxEntries are required.
type Limits struct {
	// MaxBytes caps the sum of the sizes entries declare, kept or not: each
	// header is checked before its body is read, so a bomb is refused before
	// it is decompressed. Headers and padding may add 8 KiB per entry and
	// 1 MiB per archive on top; more is refused too.
	MaxBytes int64
	// MaxEntries caps the entries read, kept or not.
	MaxEntries int
	// MaxFiles caps the regular files kept; 0 means MaxEntries alone.
	MaxFiles int
}

// Select says which part of an archive is kept, and where it lands.
type Select struct {
	// Dir keeps only the tree below this directory of the archive (clean,
	// relative, e.g. "configs"), moved to the destination root. Empty keeps
	// the whole archive in place.
	Dir string
	// Top, when set, keeps only these names at the top of what Dir keeps
	// (a bundle's "manifests" and "metadata").
	Top []string
}

// Options configure a walk.
type Options struct {
	Compression Compression
	Links       Links
	Select      Select
	// Whiteouts applies OCI layer whiteouts instead of writing them: an
	// entry ".wh.<name>" removes <name> written by earlier archives, and
	// ".wh..wh..opq" empties its directory of what earlier archives wrote.
	// Only Extractor honours it.
	Whiteouts bool
	Limits    Limits
	// Root names the destination in messages ("the repository"); empty
	// means "the archive root".
	Root string
}

func (o Options) check() error {
	if o.Limits.MaxBytes <= 0 || o.Limits.MaxEntries <= 0 {
		return errors.New("archive: MaxBytes and MaxEntries must be set")
	}
	return nil
}

func (o Options) root() string {
	if o.Root == "" {
		return "the archive root"
	}
	return o.Root
}

// dest maps a cleaned archive name to its name under the destination ("" is
// the destination itself), or false when Select does not keep it.
func (s Select) dest(name string) (string, bool) {
	rel := name
	if s.Dir != "" {
		var ok bool
		if rel, ok = strings.CutPrefix(name, s.Dir+"/"); !ok {
			if name != s.Dir {
				return "", false
			}
			rel = ""
		}
	}
	if len(s.Top) > 0 && rel != "" {
		top, _, _ := strings.Cut(rel, "/")
		if !slices.Contains(s.Top, top) {
			return "", false
		}
	}
	return rel, true
}

// covers reports whether removing the archive path name (a whiteout target,
// or a directory an opaque whiteout empties) removes everything Select keeps:
// name is the archive root, Dir, or one of Dir's parents.
func (s Select) covers(name string) bool {
	return name == "" || name == s.Dir || strings.HasPrefix(s.Dir, name+"/")
}

// ErrRefused matches every error that refuses an archive for what it holds
// (an *EntryError or a *LimitError), as opposed to a stream that could not
// be read: errors.Is(err, ErrRefused).
var ErrRefused = errors.New("archive refused")

// ErrNotGzip: a Gzip stream that is not gzip.
var ErrNotGzip = errors.New("not gzip")

// ErrNotTar: a stream that is not a tar archive (in any compression Detect
// knows).
var ErrNotTar = errors.New("not a tar archive")

// Reasons an entry is refused, wrapped by *EntryError (errors.Is).
var (
	ErrNUL          = &reason{"NUL byte in the name"}
	ErrNameTooLong  = &reason{fmt.Sprintf("name longer than %d bytes", maxName)}
	ErrAbsolute     = &reason{"absolute path"}
	ErrTraversal    = &reason{"path traversal (`..` in the name)"}
	ErrNotDir       = &reason{"it is a file, but the extraction needs a directory there"}
	ErrType         = &reason{"unsupported type"}
	ErrLink         = &reason{"links are not allowed"}
	ErrHardLink     = &reason{"hard links are not supported"}
	ErrLinkEmpty    = &reason{"empty link target"}
	ErrLinkAbsolute = &reason{"symbolic link to an absolute path"}
	ErrLinkLeaves   = &reason{"the link leaves %s"}
	ErrLinkOutside  = &reason{"it resolves outside %s"}
	ErrLinkLoop     = &reason{"symbolic link loop"}
	ErrBelowLink    = &reason{"it is below the symbolic link"}
	ErrReplacesLink = &reason{"it replaces the symbolic link of the same name"}
)

// maxName bounds entry names (Linux's PATH_MAX): nothing longer can be
// created, and it bounds the work per name.
const maxName = 4096

// reason is an entry refusal; "%s" in its text, when present, names the
// destination.
type reason struct{ text string }

func (r *reason) Error() string { return r.format("the archive root") }

func (r *reason) format(root string) string {
	if strings.Contains(r.text, "%s") {
		return fmt.Sprintf(r.text, root)
	}
	return r.text
}

// EntryError refuses one entry; the whole archive is refused with it.
type EntryError struct {
	Name   string // as written in the archive
	Link   string // the link target, for links
	Reason error  // one of the Err* reasons above
	Detail string // more about the reason (the link an entry is below, a type)
	root   string
}

func (e *EntryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "entry %q", e.Name)
	if e.Link != "" {
		fmt.Fprintf(&b, " is a link (to %q)", e.Link)
	}
	b.WriteString(": ")
	if r, ok := e.Reason.(*reason); ok {
		b.WriteString(r.format(e.root))
	} else {
		b.WriteString(e.Reason.Error())
	}
	if e.Detail != "" {
		b.WriteString(" " + e.Detail)
	}
	return b.String()
}

func (e *EntryError) Unwrap() error        { return e.Reason }
func (e *EntryError) Is(target error) bool { return target == ErrRefused }

// Limit names one of the limits a walk enforces.
type Limit int

const (
	LimitBytes    Limit = iota // Limits.MaxBytes
	LimitEntries               // Limits.MaxEntries
	LimitFiles                 // Limits.MaxFiles
	LimitOverhead              // headers and padding beyond their allowance
	LimitTrailing              // data after the end of the tar archive
)

// LimitError refuses an archive that goes over a limit. Callers rephrase it
// with the name of the setting that raises the limit.
type LimitError struct {
	Limit Limit
	Max   int64
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitBytes:
		return fmt.Sprintf("the archive expands to more than %d bytes", e.Max)
	case LimitEntries:
		return fmt.Sprintf("the archive has more than %d entries", e.Max)
	case LimitFiles:
		return fmt.Sprintf("the archive has more than %d files to extract", e.Max)
	case LimitOverhead:
		return fmt.Sprintf("the archive's headers and padding take more than %d bytes (8 KiB per entry and 1 MiB are allowed)", e.Max)
	default:
		return fmt.Sprintf("more than %d bytes follow the end of the tar archive", e.Max)
	}
}

func (e *LimitError) Is(target error) bool { return target == ErrRefused }
