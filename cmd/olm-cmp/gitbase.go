package main

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

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/archive"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/upgrade"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// gitBaseLimits bound what --git-base extracts from one revision: the spec
// directory and the bundle and catalog directories it names.
var gitBaseLimits = archive.Limits{MaxBytes: 2 << 30, MaxEntries: 200_000}

// gitBaseRequest builds the FROM request of `diff DIR --git-base REV`: the
// spec in DIR as it was at REV. The spec directory, and the bundle and
// catalog directories the spec names by relative path, are extracted with
// git archive into a temporary directory, in their places in the
// repository, so ./bundle and ../catalog mean what they meant at REV. The
// request is nil when DIR had no olm-cmp.yaml at REV (a new application).
//
// With --apps-from (appsFrom; ix, the manifests as they are now), the
// manifests are extracted as they were at REV too, and the spec is the one
// the application naming DIR there made the plugin render.
func gitBaseRequest(cmd *cobra.Command, dir, rev string, appsFrom []string, ix *upgrade.Index) (*render.Request, func(), error) {
	cleanup := func() {}
	ctx := cmd.Context()
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: %s is not in a Git repository: %w", echo.Quote(rev), dir, err)
	}
	prefix, err := git(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
	}
	top, prefix = strings.TrimSpace(top), strings.TrimSuffix(strings.TrimSpace(prefix), "/")
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: no such revision in the repository of %s (a CI checkout needs the history: fetch-depth: 0)", echo.Quote(rev), dir)
	}
	specPath := path.Join(prefix, spec.FileName)
	if _, err := git(ctx, top, "cat-file", "-e", rev+":"+specPath); err != nil {
		return nil, cleanup, nil // not there at REV: everything is added
	}
	data, err := git(ctx, top, "show", rev+":"+specPath)
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: reading %s: %w", echo.Quote(rev), specPath, err)
	}
	file, err := spec.Parse(rev+":"+specPath, []byte(data))
	if err != nil {
		return nil, cleanup, err
	}
	paths := []string{cmp.Or(prefix, ".")}
	for _, ref := range []struct{ field, value string }{{"spec.bundle", file.Spec.Bundle}, {"spec.catalog", file.Spec.Catalog}} {
		if !render.IsDirRef(ref.value) || filepath.IsAbs(ref.value) {
			continue
		}
		p := path.Join(prefix, filepath.ToSlash(ref.value))
		if p == ".." || strings.HasPrefix(p, "../") {
			return nil, cleanup, fmt.Errorf("--git-base %s: %s %q at %s leaves the repository", echo.Quote(rev), ref.field, ref.value, specPath)
		}
		paths = append(paths, p)
	}
	tmp, err := os.MkdirTemp("", "olm-cmp-git-base-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if err := gitExtract(ctx, top, rev, paths, tmp); err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
	}
	// The --apps-from manifests that existed at REV, as they were then.
	var manifests []string
	for _, a := range appsFrom {
		p, err := repoPath(top, a)
		if err != nil {
			return nil, cleanup, fmt.Errorf("--apps-from %s: %w", echo.Quote(a), err)
		}
		if _, err := git(ctx, top, "cat-file", "-e", rev+":"+p); err == nil {
			manifests = append(manifests, p)
		}
	}
	if len(manifests) > 0 {
		if err := gitExtract(ctx, top, rev, manifests, tmp); err != nil {
			return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
		}
		// As now, a named manifest the scan would pass over is refused.
		for _, m := range manifests {
			if err := checkAppsFrom([]string{filepath.Join(tmp, filepath.FromSlash(m))}); err != nil {
				return nil, cleanup, fmt.Errorf("--git-base %s: %s", echo.Quote(rev), strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), echo.Short(rev)+":"))
			}
		}
	}
	fromDir := filepath.Join(tmp, filepath.FromSlash(prefix))
	req, err := loadRequest(cmd, fromDir, nil)
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
	}
	if ix != nil {
		var old *upgrade.Index
		if len(manifests) > 0 {
			only := make([]string, len(manifests))
			for i, m := range manifests {
				only[i] = filepath.Join(tmp, filepath.FromSlash(m))
			}
			if old, err = upgrade.Scan(ctx, tmp, only...); err != nil {
				// Named by the revision, not by the temporary directory.
				return nil, cleanup, fmt.Errorf("--git-base %s: the --apps-from manifests at %s: %s", echo.Quote(rev), echo.Short(rev), strings.ReplaceAll(err.Error(), tmp, echo.Short(rev)+":"))
			}
			// This repository's URLs, for the repoURLs at REV.
			old.AdoptRepoURLs(ix)
		}
		if old == nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: none of the --apps-from manifests existed at %s: %s there is olm-cmp.yaml alone\n", echo.Text(rev), echo.Text(dir))
		} else if _, err := withApp(cmd, old, fromDir, dir+" at "+rev, &req); err != nil {
			return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
		}
	}
	return &req, cleanup, nil
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

// appsIndex scans the --apps-from manifests of the repository holding dir;
// nil without the flag.
func appsIndex(cmd *cobra.Command, dir string, appsFrom []string) (*upgrade.Index, error) {
	if len(appsFrom) == 0 {
		return nil, nil
	}
	if err := checkAppsFrom(appsFrom); err != nil {
		return nil, err
	}
	root, err := upgrade.RepoRoot(dir)
	if err != nil {
		return nil, err
	}
	return upgrade.Scan(cmd.Context(), root, appsFrom...)
}

// checkAppsFrom refuses an --apps-from path the scan would pass over
// without a word: a symbolic link (never followed), a file that is not a
// regular one (a device, a FIFO), a manifest over the scan's size bound, or
// one it cannot parse.
// Inside a named directory such files are skipped, as in a repository scan.
func checkAppsFrom(appsFrom []string) error {
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
		case fi.Size() > upgrade.MaxManifestBytes():
			return fmt.Errorf("--apps-from %s is %d bytes, over the %d-byte bound of one Argo CD manifest: split it, or give the files that hold the Applications", echo.Quote(a), fi.Size(), upgrade.MaxManifestBytes())
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

// withApp applies to req's spec the plugin parameters and env of the
// application of ix naming dir (upgrade.Rendered), saying so on stderr when
// none does; name is dir for that line ("" for dir itself). A nil ix
// (--apps-from not given) changes nothing. applied says whether an
// application's parameters were applied.
func withApp(cmd *cobra.Command, ix *upgrade.Index, dir, name string, req *render.Request) (applied bool, err error) {
	if name == "" {
		name = dir
	}
	if ix == nil {
		return false, nil
	}
	s, app, err := upgrade.Rendered(ix, dir, req.Spec)
	if err != nil {
		return false, err
	}
	if app == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: no Argo CD application in the --apps-from manifests renders %s: it is olm-cmp.yaml alone\n", echo.Text(name))
		return false, nil
	}
	req.Spec = s
	return true, nil
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
	x, err := archive.NewExtractor(dst, archive.Options{Compression: archive.Detect, Links: archive.LinksInside, Limits: gitBaseLimits, Root: "the Git revision"})
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
