package upgrade

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitConfigCases are configs git reads in ways a line-by-line reader gets
// wrong: comments after values, quoting, escapes, continuation lines, case,
// subsections, odd whitespace, and files git refuses.
var gitConfigCases = map[string]string{
	"as git writes it":        "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/org/gitops.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
	"semicolon comment":       "[remote \"origin\"]\n\turl = https://example.com/org/gitops.git ; the main remote\n",
	"hash comment":            "[remote \"origin\"]\n\turl = https://example.com/org/gitops.git# note\n",
	"comment chars quoted":    "[remote \"origin\"]\n\turl = \"https://example.com/org/a;b#c\" ; real comment\n",
	"continuation quoted":     "[remote \"origin\"]\n\turl = \"https://example.com/\"\\\n\"org/gitops.git\"\n",
	"continuation indented":   "[remote \"origin\"]\n\turl = \"https://example.com/\"\\\n\t\"org/gitops.git\"\n",
	"continuation bare":       "[remote \"origin\"]\n\turl = https://example.com/\\\norg/gitops.git\n",
	"continuation at eof":     "[remote \"origin\"]\n\turl = https://example.com/org/gitops.git\\",
	"continuation in quotes":  "[remote \"origin\"]\n\turl = \"https://example.com/\\\norg/gitops.git\"\n",
	"pieces quoted":           "[remote \"origin\"]\n\turl = \"https://\"example.com\"/org\"/gitops.git\n",
	"escapes":                 "[remote \"origin\"]\n\turl = \"a\\\\b\\\"c\\td\\ne\\bf\"\n",
	"unknown escape":          "[remote \"origin\"]\n\turl = https://example.com/\\q\n",
	"unterminated quote":      "[remote \"origin\"]\n\turl = \"https://example.com/org/gitops.git\n",
	"inner spaces kept":       "[remote \"origin\"]\n\turl =   a  \t b   \n",
	"quoted spaces kept":      "[remote \"origin\"]\n\turl = \"  a \"  \" b  \"\n",
	"upper-case names":        "[REMOTE \"Origin\"]\n\tURL = https://example.com/org/gitops.git\n",
	"old subsection form":     "[remote.Origin]\n\turl = https://example.com/org/gitops.git\n",
	"subsection escapes":      "[remote \"a\\\"b\\\\c\\d\"]\n\turl = x\n",
	"subsection space":        "[remote   \"o r\"]\n\turl = x\n",
	"subsection newline":      "[remote \"o\nr\"]\n\turl = x\n",
	"junk after subsection":   "[remote \"o\" ]\n\turl = x\n",
	"key on header line":      "[remote \"origin\"] url = https://example.com/org/gitops.git\n[core] bare\n",
	"key without value":       "[remote \"origin\"]\n\turl\n\tmirror\n",
	"key then comment":        "[remote \"origin\"]\n\turl ; comment\n",
	"empty value":             "[remote \"origin\"]\n\turl =\n\turl = ;\n",
	"no section":              "url = https://example.com/x\n",
	"key with digit first":    "[remote \"origin\"]\n\t1url = x\n",
	"key with underscore":     "[remote \"origin\"]\n\tu_rl = x\n",
	"section bad char":        "[remo_te \"origin\"]\n\turl = x\n",
	"section unterminated":    "[remote \"origin\"\n\turl = x\n",
	"crlf":                    "[remote \"origin\"]\r\n\turl = https://example.com/org/gitops.git\r\n",
	"lone cr":                 "[remote \"origin\"]\n\turl = https://example.com/\rorg\n",
	"bom":                     "\xef\xbb\xbf[remote \"origin\"]\n\turl = https://example.com/org/gitops.git\n",
	"comment lines":           "# top\n; top\n  [remote \"origin\"] # after header\n\t# url = https://wrong.example/\n\turl = https://example.com/org/gitops.git\n",
	"several remotes":         "[remote \"a\"]\nurl = https://a.example/x\nurl = https://a2.example/x\n[remote \"b\"]\nurl=https://b.example/y\n",
	"nul in value":            "[remote \"origin\"]\n\turl = https://example.com/a\x00b\n",
	"tab before equals":       "[remote \"origin\"]\n\turl\t=\thttps://example.com/x\n",
	"vertical tab":            "[remote \"origin\"]\n\turl = \vhttps://example.com/x\n",
	"empty section":           "[]\nurl = x\n",
	"empty section alone":     "[]\n[remote \"o\"]\nurl = x\n",
	"section ends in dot":     "[a.]\nk = v\n",
	"section starts with dot": "[.a]\nk = v\n",
	"empty subsection":        "[remote \"\"]\nurl = x\n",
	"no space before quote":   "[remote\"o\"]\nurl = x\n",
	"subsection only":         "[ \"x\"]\nk = v\n",
	"dots in section":         "[a.b.c]\nk = v\n",
}

// TestGitConfigOracle reads each config as git reads it (`git config
// --list --includes`) and with parseGitConfig: the same variables, in the
// same order, with the same values, and a refusal where git refuses. Skipped
// without git.
func TestGitConfigOracle(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git here: the oracle needs it")
	}
	for name, cfg := range gitConfigCases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "config")
			if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			want, gitErr := gitList(t, gitBin, file)
			got, err := configVars(file, 0)
			if gitErr != nil {
				if err == nil {
					t.Errorf("git refuses the file (%v), parseGitConfig read %+v", gitErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("git reads %+v, parseGitConfig refused: %v", want, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("parseGitConfig:\n  %+v\ngit:\n  %+v", got, want)
			}
		})
	}
}

// TestGitConfigOracleIncludes: included files are read in place, relative
// to the including file; a missing one is skipped; one git refuses makes
// the whole config refused.
func TestGitConfigOracleIncludes(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git here: the oracle needs it")
	}
	for name, files := range map[string]map[string]string{
		"in place": {
			"config":     "[remote \"a\"]\n\turl = https://a.example/x\n[include]\n\tpath = sub/r.cfg\n[remote \"c\"]\n\turl = https://c.example/z\n",
			"sub/r.cfg":  "[remote \"b\"]\n\turl = https://b.example/y ; comment\n[include]\n\tpath = r2.cfg\n",
			"sub/r2.cfg": "[remote \"d\"]\n\turl = \"https://d.example/\"\\\n\"w\"\n",
		},
		"missing include": {
			"config": "[include]\n\tpath = nowhere.cfg\n[remote \"a\"]\n\turl = https://a.example/x\n",
		},
		"broken include": {
			"config":  "[remote \"a\"]\n\turl = https://a.example/x\n[include]\n\tpath = bad.cfg\n",
			"bad.cfg": "[remote \"b\"\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, data := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join(dir, "config")
			want, gitErr := gitList(t, gitBin, file)
			got, err := configVars(file, 0)
			switch {
			case gitErr != nil && err == nil:
				t.Errorf("git refuses the config (%v), configVars read %+v", gitErr, got)
			case gitErr == nil && err != nil:
				t.Errorf("git reads %+v, configVars refused: %v", want, err)
			case !slices.Equal(got, want):
				t.Errorf("configVars:\n  %+v\ngit:\n  %+v", got, want)
			}
		})
	}
}

// TestRemotesAsGitReadsThem: the two configs the hidden corpus wrote (a
// comment after the URL; the URL in quoted pieces joined by a continuation
// line) name this checkout's repository, and an insteadOf rewrite gives the
// URL git fetches from (`git ls-remote --get-url`).
func TestRemotesAsGitReadsThem(t *testing.T) {
	for name, c := range map[string]struct{ cfg, want string }{
		"comment":      {"[remote \"origin\"]\n\turl = https://github.com/org/gitops.git ; the main remote\n", "https://github.com/org/gitops.git"},
		"continuation": {"[remote \"origin\"]\n\turl = \"https://github.com/\"\\\n\"org/gitops.git\"\n", "https://github.com/org/gitops.git"},
		"insteadOf":    {"[url \"https://github.com/\"]\n\tinsteadOf = gh:\n[url \"https://github.com/org/\"]\n\tinsteadOf = gh:org/\n[remote \"origin\"]\n\turl = gh:org/gitops.git\n", "https://github.com/org/gitops.git"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			os.Mkdir(filepath.Join(root, ".git"), 0o755)
			if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte(c.cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := Remotes(root); !slices.Equal(got, []string{c.want}) {
				t.Errorf("Remotes = %q, want %q", got, c.want)
			}
			if gitBin, err := exec.LookPath("git"); err == nil {
				cmd := exec.Command(gitBin, "init", "-q", root)
				cmd.Env = gitEnv(t)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git init: %v: %s", err, out)
				}
				os.WriteFile(filepath.Join(root, ".git", "config"), []byte(c.cfg+"[core]\n\trepositoryformatversion = 0\n"), 0o644)
				cmd = exec.Command(gitBin, "-C", root, "ls-remote", "--get-url", "origin")
				cmd.Env = gitEnv(t)
				out, err := cmd.Output()
				if got := strings.TrimSpace(string(out)); err != nil || got != c.want {
					t.Errorf("git ls-remote --get-url: %q (%v), want %q", got, err, c.want)
				}
			}
		})
	}
}

// gitList is git's reading of file: every variable, included files' in
// place; an error when git refuses it.
func gitList(t *testing.T, gitBin, file string) ([]gitVar, error) {
	t.Helper()
	cmd := exec.Command(gitBin, "config", "--file", file, "--includes", "--list", "-z")
	cmd.Env = gitEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New(strings.TrimSpace(stderr.String()))
	}
	var vars []gitVar
	for _, e := range strings.Split(string(out), "\x00") {
		if e == "" {
			continue
		}
		name, value, ok := strings.Cut(e, "\n")
		vars = append(vars, gitVar{Name: name, Value: value, HasValue: ok})
	}
	return vars, nil
}

// gitEnv keeps the user's and the system's configs out of git's answer.
func gitEnv(t *testing.T) []string {
	return append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

// FuzzParseGitConfig: any bytes give variables or an error, never a panic
// or a hang.
func FuzzParseGitConfig(f *testing.F) {
	for _, c := range gitConfigCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vars, err := parseGitConfig(data)
		if err != nil && vars != nil {
			t.Errorf("variables and an error: %+v %v", vars, err)
		}
	})
}
