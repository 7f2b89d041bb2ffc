// Package gitbase extracts an application directory as it was at a Git
// revision (`olm-cmp diff DIR --git-base REV`): the spec directory, the
// bundle and catalog directories its olm-cmp.yaml names by relative path,
// and the --apps-from manifests that existed then, in their places in the
// repository, so ./bundle and ../catalog mean what they meant at REV. It
// runs git (rev-parse, cat-file, show, archive) and reads git archive's
// tar stream through internal/archive, the one tar reader. It loads and
// renders nothing.
package gitbase

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/archive"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/upgrade"
)

// limits bound what --git-base extracts from one revision: the spec
// directory and the bundle and catalog directories it names.
var limits = archive.Limits{MaxBytes: 2 << 30, MaxEntries: 200_000}

// Tree is an application directory as it was at a revision, extracted
// into a temporary directory that Close removes.
type Tree struct {
	rev  string
	root string // the temporary directory: the repository's top at rev
	// Dir is the spec directory at rev, inside the temporary directory.
	Dir string
	// manifests are the --apps-from manifests that existed at rev,
	// slash-separated and relative to the repository's top.
	manifests []string
}

// Close removes the extracted files.
func (t *Tree) Close() { os.RemoveAll(t.root) }

// Extract extracts DIR (dir) as it was at rev, with the bundle and catalog
// directories its olm-cmp.yaml named by relative path then (with the
// symbolic links on their way in the tree then, and their targets) and the
// appsFrom manifests (paths relative to the working directory) that
// existed then. The tree is nil when dir had no olm-cmp.yaml at rev (a new
// application). Errors name the revision, never the temporary directory.
func Extract(ctx context.Context, dir, rev string, appsFrom []string) (*Tree, error) {
	// One git for both: the top on the first line, dir's prefix on the second.
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("--git-base %s: %s is not in a Git repository: %w", echo.Quote(rev), dir, err)
	}
	top, prefix, _ := strings.Cut(out, "\n")
	top, prefix = strings.TrimSpace(top), strings.TrimSuffix(strings.TrimSpace(prefix), "/")
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("--git-base %s: no such revision in the repository of %s (a CI checkout needs the history: fetch-depth: 0)", echo.Quote(rev), dir)
	}
	specPath := path.Join(prefix, spec.FileName)
	if _, err := git(ctx, top, "cat-file", "-e", rev+":"+specPath); err != nil {
		return nil, nil // not there at REV: everything is added
	}
	data, err := git(ctx, top, "show", rev+":"+specPath)
	if err != nil {
		return nil, fmt.Errorf("--git-base %s: reading %s: %w", echo.Quote(rev), specPath, err)
	}
	file, err := spec.Parse(rev+":"+specPath, []byte(data))
	if err != nil {
		return nil, err
	}
	paths := []string{cmp.Or(prefix, ".")}
	for _, ref := range []struct{ field, value string }{{"spec.bundle", file.Spec.Bundle}, {"spec.catalog", file.Spec.Catalog}} {
		if !render.IsDirRef(ref.value) || filepath.IsAbs(ref.value) {
			continue
		}
		p := path.Join(prefix, filepath.ToSlash(ref.value))
		if p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("--git-base %s: %s %q at %s leaves the repository", echo.Quote(rev), ref.field, ref.value, specPath)
		}
		// A symbolic link at REV (app/bundle -> ../shared/bundle) is
		// followed as render follows it, and its target extracted too.
		more, err := resolve(ctx, top, rev, p)
		if errors.Is(err, errMissing) {
			continue // render, reading the tree at REV, says it is not found
		}
		if err != nil {
			what := strings.TrimPrefix(ref.field, "spec.")
			return nil, fmt.Errorf("--git-base %s: %s %s: the %s directory must be inside the repository (a symbolic link in the tree at %s leads outside it)", echo.Quote(rev), ref.field, echo.Quote(ref.value), what, echo.Short(rev))
		}
		paths = append(paths, p)
		paths = append(paths, more...)
	}
	tmp, err := os.MkdirTemp("", "olm-cmp-git-base-")
	if err != nil {
		return nil, err
	}
	t := &Tree{rev: rev, root: tmp, Dir: filepath.Join(tmp, filepath.FromSlash(prefix))}
	if err := t.extract(ctx, top, paths, appsFrom); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// extract writes paths, and the appsFrom manifests that existed at t.rev,
// into t.root.
func (t *Tree) extract(ctx context.Context, top string, paths, appsFrom []string) error {
	rev, tmp := t.rev, t.root
	if err := gitExtract(ctx, top, rev, paths, tmp); err != nil {
		return fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
	}
	// The --apps-from manifests that existed at REV, as they were then.
	for _, a := range appsFrom {
		p, err := repoPath(top, a)
		if err != nil {
			return fmt.Errorf("--apps-from %s: %w", echo.Quote(a), err)
		}
		if _, err := git(ctx, top, "cat-file", "-e", rev+":"+p); err == nil {
			t.manifests = append(t.manifests, p)
		}
	}
	if len(t.manifests) == 0 {
		return nil
	}
	if err := gitExtract(ctx, top, rev, t.manifests, tmp); err != nil {
		return fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
	}
	// As now, a named manifest the scan would pass over is refused.
	for _, m := range t.manifests {
		if err := upgrade.CheckNamed([]string{filepath.Join(tmp, filepath.FromSlash(m))}); err != nil {
			return fmt.Errorf("--git-base %s: %s", echo.Quote(rev), strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), echo.Short(rev)+":"))
		}
	}
	return nil
}

// Index scans the --apps-from manifests as they were at the revision, with
// now's repository URLs (the Git remotes of this checkout, for the
// repoURLs at the revision); nil when none of them existed then.
func (t *Tree) Index(ctx context.Context, now *upgrade.Index) (*upgrade.Index, error) {
	if len(t.manifests) == 0 {
		return nil, nil
	}
	only := make([]string, len(t.manifests))
	for i, m := range t.manifests {
		only[i] = filepath.Join(t.root, filepath.FromSlash(m))
	}
	old, err := upgrade.Scan(ctx, t.root, only...)
	if err != nil {
		// Named by the revision, not by the temporary directory.
		return nil, fmt.Errorf("--git-base %s: the --apps-from manifests at %s: %s", echo.Quote(t.rev), echo.Short(t.rev), strings.ReplaceAll(err.Error(), t.root, echo.Short(t.rev)+":"))
	}
	old.AdoptRepoURLs(now)
	return old, nil
}

// errLeaves is resolve's error: a symbolic link leads outside the
// repository.
var errLeaves = errors.New("a symbolic link leads outside the repository")

// errMissing is resolve's error: the path is not there at the revision.
var errMissing = errors.New("not there at the revision")

// resolve follows the symbolic links on the slash-separated path p (relative
// to the repository's top) in the tree at rev, as the filesystem would
// follow them in a checkout of rev, and returns what else to extract for p
// to mean there what it meant then: each link met on the way, and the path
// it finally leads to. A link leaving the repository (absolute, or through
// ..) is errLeaves, as render refuses one. A path that does not exist at
// rev is errMissing, left to render, which says it is not found; a chain of
// links too long to follow is left to render too.
func resolve(ctx context.Context, top, rev, p string) ([]string, error) {
	var extra []string
	done := "" // the resolved part, a directory at rev
	rest := strings.Split(p, "/")
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if done == "" {
				return nil, errLeaves
			}
			done = path.Dir(done)
			if done == "." {
				done = ""
			}
			continue
		}
		next := path.Join(done, name)
		out, err := git(ctx, top, "ls-tree", "-z", rev, "--", next)
		if err != nil || out == "" {
			return nil, errMissing
		}
		mode, _, _ := strings.Cut(out, " ")
		if mode != "120000" {
			done = next
			continue
		}
		if hops++; hops > 40 {
			return extra, nil
		}
		target, err := git(ctx, top, "cat-file", "blob", rev+":"+next)
		if err != nil {
			return extra, nil
		}
		if path.IsAbs(target) || filepath.IsAbs(target) {
			return nil, errLeaves
		}
		extra = append(extra, next)
		rest = append(strings.Split(target, "/"), rest...)
	}
	if done != "" && done != p {
		extra = append(extra, done)
	}
	return extra, nil
}

// repoPath is p (relative to the working directory) relative to the
// repository's top, slash-separated; outside it is an error.
func repoPath(top, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("outside the repository %s: give Argo CD manifests of the repository", top)
	}
	return cmp.Or(filepath.ToSlash(rel), "."), nil
}

// gitExtract writes the paths of revision rev into dst, through the one
// tar reader the project trusts with archives.
func gitExtract(ctx context.Context, repo, rev string, paths []string, dst string) error {
	c := exec.CommandContext(ctx, "git", append([]string{"-C", repo, "archive", "--format=tar", rev, "--"}, paths...)...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("running git: %w", err)
	}
	x, err := archive.NewExtractor(dst, archive.Options{Compression: archive.Detect, Links: archive.LinksInside, Limits: limits, Root: "the Git revision"})
	if err != nil {
		c.Process.Kill()
		c.Wait()
		return err
	}
	defer x.Close()
	xerr := x.Extract(ctx, out, nil)
	io.Copy(io.Discard, out) // let git finish writing before Wait
	if err := c.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %s", echo.Quote(rev), firstLine(stderr.String(), err))
	}
	return xerr
}

// git runs git in dir and returns its output; an error carries the first
// line git wrote to stderr.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	c := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("running git: %w", err)
		}
		return "", errors.New(firstLine(stderr.String(), err))
	}
	return stdout.String(), nil
}

func firstLine(s string, fallback error) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return fallback.Error()
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}
