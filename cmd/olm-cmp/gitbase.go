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
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
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
func gitBaseRequest(cmd *cobra.Command, dir, rev string) (*render.Request, func(), error) {
	cleanup := func() {}
	ctx := cmd.Context()
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %q: %s is not in a Git repository: %w", rev, dir, err)
	}
	prefix, err := git(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %q: %w", rev, err)
	}
	top, prefix = strings.TrimSpace(top), strings.TrimSuffix(strings.TrimSpace(prefix), "/")
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %q: no such revision in the repository of %s (a CI checkout needs the history: fetch-depth: 0)", rev, dir)
	}
	specPath := path.Join(prefix, spec.FileName)
	if _, err := git(ctx, top, "cat-file", "-e", rev+":"+specPath); err != nil {
		return nil, cleanup, nil // not there at REV: everything is added
	}
	data, err := git(ctx, top, "show", rev+":"+specPath)
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %q: reading %s: %w", rev, specPath, err)
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
			return nil, cleanup, fmt.Errorf("--git-base %q: %s %q at %s leaves the repository", rev, ref.field, ref.value, specPath)
		}
		paths = append(paths, p)
	}
	tmp, err := os.MkdirTemp("", "olm-cmp-git-base-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if err := gitExtract(ctx, top, rev, paths, tmp); err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %q: %w", rev, err)
	}
	req, err := loadRequest(cmd, filepath.Join(tmp, filepath.FromSlash(prefix)), nil)
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %q: %w", rev, err)
	}
	return &req, cleanup, nil
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
		return fmt.Errorf("git archive %s: %s", rev, firstLine(stderr.String(), err))
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
