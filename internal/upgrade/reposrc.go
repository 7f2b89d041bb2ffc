package upgrade

import (
	"bytes"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/olm-cmp/olm-cmp/internal/safefile"
)

// maxGitConfigBytes bounds the Git config read for the remotes: a config
// is a few hundred bytes; a larger file is read no further.
const maxGitConfigBytes = 1 << 20

// Remotes are the URLs of the Git remotes of the work tree at root
// (remote.NAME.url in its config, rewritten by url.BASE.insteadOf; none
// from a config over 1 MiB: a remote cut short would name another
// repository), read as git reads the config file itself and the files its
// [include] sections name (configRemotes), so that no git program is
// needed and no other repository's config (a parent's, the user's) is
// consulted. None when root has no .git entry or its config cannot be read.
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
	return configRemotes(filepath.Join(dir, "config"))
}

// maxGitConfigIncludes bounds how deep [include] path= is followed (git
// itself stops at 10).
const maxGitConfigIncludes = 10

// configRemotes are the remote URLs of the Git config file name, read as
// git reads it (parseGitConfig, with the files its [include] sections name),
// each rewritten by the config's url.BASE.insteadOf as git rewrites it
// before fetching. None when git would refuse the file or an included one,
// or one cannot be read whole: a remote read wrong would name another
// repository.
func configRemotes(name string) []string {
	vars, err := configVars(name, 0)
	if err != nil {
		return nil
	}
	insteadOf := map[string]string{} // the prefix a URL is written with -> the base git uses
	for _, v := range vars {
		if base, ok := strings.CutPrefix(v.Name, "url."); ok && v.HasValue {
			if base, ok = strings.CutSuffix(base, ".insteadof"); ok && base != "" {
				insteadOf[v.Value] = base
			}
		}
	}
	var urls []string
	for _, v := range vars {
		if !v.HasValue || v.Value == "" || !strings.HasPrefix(v.Name, "remote.") || !strings.HasSuffix(v.Name, ".url") || len(v.Name) < len("remote..url") {
			continue
		}
		u := rewriteURL(v.Value, insteadOf)
		if !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	return urls
}

// rewriteURL applies the longest insteadOf prefix of u, as git does.
func rewriteURL(u string, insteadOf map[string]string) string {
	best := ""
	for prefix := range insteadOf {
		if strings.HasPrefix(u, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return u
	}
	return insteadOf[best] + u[len(best):]
}

// configVars are the variables of the Git config file name, each file its
// [include] sections name read in its place (as git reads them: a relative
// path from name's directory, ~/ from the home directory; a missing file
// is skipped), depth includes deep; an include beyond maxGitConfigIncludes
// is not followed (git refuses the whole config then; the variables before
// it are this checkout's all the same). [includeIf] is not followed: its
// conditions are git's to evaluate.
func configVars(name string, depth int) ([]gitVar, error) {
	data, err := readCapped(name)
	if err != nil {
		return nil, err
	}
	vars, err := parseGitConfig(data)
	if err != nil {
		return nil, err
	}
	var out []gitVar
	for _, v := range vars {
		out = append(out, v)
		if v.Name != "include.path" || !v.HasValue || v.Value == "" || depth >= maxGitConfigIncludes {
			continue
		}
		inc := v.Value
		if rest, ok := strings.CutPrefix(inc, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			inc = filepath.Join(home, rest)
		} else if !filepath.IsAbs(inc) {
			inc = filepath.Join(filepath.Dir(name), inc)
		}
		sub, err := configVars(inc, depth+1)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

func readCapped(name string) ([]byte, error) {
	// Only a regular file, through links (safefile.Read): a checkout's
	// .git file may point anywhere, and opening a FIFO blocks until
	// something writes to it, which nothing does.
	data, err := safefile.Read(name, maxGitConfigBytes, true)
	var notRegular *safefile.NotRegularError
	var tooLarge *safefile.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return nil, errors.New(name + ": not a regular file")
	case errors.As(err, &tooLarge):
		return nil, errors.New(name + ": larger than a Git config is")
	}
	return data, err
}

var scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.*)$`) })

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
	} else if m := scpLike().FindStringSubmatch(u); m != nil {
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
