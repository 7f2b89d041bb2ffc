package upgrade

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// maxGitConfigBytes bounds the Git config read for the remotes: a config
// is a few hundred bytes; a larger file is read no further.
const maxGitConfigBytes = 1 << 20

// Remotes are the URLs of the Git remotes of the work tree at root
// (remote.NAME.url in its config; none from a config over 1 MiB: a
// remote cut short would name another repository), read from the config file itself and
// the files its [include] sections name (as git reads them), so that no git
// program is needed and no other repository's config (a parent's, the
// user's) is consulted. None when root has no .git entry or
// its config cannot be read.
func Remotes(root string) []string {
	dir := filepath.Join(root, ".git")
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil
	}
	if fi.Mode().IsRegular() {
		// A linked work tree or a submodule: ".git" says "gitdir: DIR", and
		// DIR's commondir (a linked work tree's) holds the shared config.
		data, err := readCapped(dir)
		if err != nil || !bytes.HasPrefix(data, []byte("gitdir:")) {
			return nil
		}
		gd := strings.TrimSpace(string(bytes.TrimPrefix(data, []byte("gitdir:"))))
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(root, gd)
		}
		dir = gd
		if c, err := readCapped(filepath.Join(gd, "commondir")); err == nil {
			if cd := strings.TrimSpace(string(c)); filepath.IsAbs(cd) {
				dir = cd
			} else {
				dir = filepath.Join(gd, cd)
			}
		}
	}
	return configRemotes(filepath.Join(dir, "config"), 0)
}

// maxGitConfigIncludes bounds how deep [include] path= is followed (git
// itself stops at 10).
const maxGitConfigIncludes = 10

// configRemotes are the remote URLs of the Git config file name and of the
// files its [include] sections name (as git reads them: a relative path
// from name's directory, ~/ from the home directory), depth includes deep.
// [includeIf] is not followed: its conditions are git's to evaluate.
func configRemotes(name string, depth int) []string {
	data, err := readCapped(name)
	if err != nil {
		return nil
	}
	urls, includes := remoteURLs(data)
	if depth >= maxGitConfigIncludes {
		return urls
	}
	for _, inc := range includes {
		if rest, ok := strings.CutPrefix(inc, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			inc = filepath.Join(home, rest)
		} else if !filepath.IsAbs(inc) {
			inc = filepath.Join(filepath.Dir(name), inc)
		}
		for _, u := range configRemotes(inc, depth+1) {
			if !slices.Contains(urls, u) {
				urls = append(urls, u)
			}
		}
	}
	return urls
}

func readCapped(name string) ([]byte, error) {
	// Only a regular file: opening a FIFO (a checkout's .git file may
	// point anywhere, and a config may be a symbolic link) blocks until
	// something writes to it, which nothing does.
	if fi, err := os.Stat(name); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errors.New(name + ": not a regular file")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGitConfigBytes+1))
	if err == nil && len(data) > maxGitConfigBytes {
		return nil, errors.New(name + ": larger than a Git config is")
	}
	return data, err
}

var (
	sectionLine = regexp.MustCompile(`^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$`)
	urlLine     = regexp.MustCompile(`(?i)^url\s*=\s*(.*)$`)
	pathLine    = regexp.MustCompile(`(?i)^path\s*=\s*(.*)$`)
)

// remoteURLs reads the url keys of a Git config's [remote "NAME"] sections,
// and the path keys of its [include] sections.
func remoteURLs(data []byte) (out, includes []string) {
	inRemote, inInclude := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxGitConfigBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := sectionLine.FindStringSubmatch(line); m != nil {
			inRemote = strings.EqualFold(m[1], "remote") && m[2] != ""
			inInclude = strings.EqualFold(m[1], "include") && m[2] == ""
			line = strings.TrimSpace(m[3])
		}
		if m := pathLine.FindStringSubmatch(line); m != nil && inInclude {
			if v := unquote(strings.TrimSpace(m[1])); v != "" {
				includes = append(includes, v)
			}
		}
		if m := urlLine.FindStringSubmatch(line); m != nil && inRemote {
			v := unquote(strings.TrimSpace(m[1]))
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	if sc.Err() != nil {
		return nil, nil
	}
	return out, includes
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}

var scpLike = regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.*)$`)

// NormalizeRepoURL is the form two Git URLs of one repository share: no
// scheme, user or port, the host in lower case, no ".git" suffix nor
// trailing slash; the scp-like ssh form (git@host:org/repo) reads as
// host/org/repo. "" for a URL it cannot read (then nothing equals it).
// The path keeps its case: two repositories whose names differ only in
// case are two repositories on some hosts.
func NormalizeRepoURL(u string) string {
	u = strings.TrimSpace(u)
	if u == "" || strings.Contains(u, "{{") {
		return ""
	}
	var host, p string
	if strings.Contains(u, "://") {
		pu, err := url.Parse(u)
		if err != nil {
			return ""
		}
		host, p = pu.Hostname(), pu.Path
	} else if m := scpLike.FindStringSubmatch(u); m != nil {
		host, p = m[1], m[2]
	} else {
		p = u // a local path: a file:// remote's other spelling
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	p = strings.Trim(p, "/")
	if host == "" && p == "" {
		return ""
	}
	if host == "" {
		return path.Clean("/" + p)
	}
	return strings.ToLower(host) + "/" + p
}
