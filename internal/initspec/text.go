package initspec

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// commentWidth is where long comment lines (quoted findings) wrap.
const commentWidth = 100

// Text is the olm-cmp.yaml of the plan; csv names the bundle (its CSV) in
// the header.
func (p *Plan) Text(csv string) []byte {
	var w textWriter
	w.comment("", "Written by olm-cmp init for "+echo.Text(csv)+". It renders with `olm-cmp render --strict`: "+
		"each requirement finding is answered below, quoted above its entry. Lines marked "+TODO+
		" are what init could not decide for you. All fields: docs/spec.md.")
	w.line("apiVersion: " + spec.APIVersion)
	w.line("kind: " + spec.Kind)
	w.line("metadata:")
	w.line("  name: " + scalar(p.Name))
	w.line("spec:")
	s := p.Source
	switch {
	case s.Catalog != "":
		w.line("  catalog: " + scalar(s.Catalog))
		w.line("  package: " + scalar(s.Package))
		if s.Channel != "" {
			w.line("  channel: " + scalar(s.Channel))
		}
		note := "the newest version; a bump changes this line and digest (olm-cmp resolve --write)"
		// A pre-release starts at a "-" before any build metadata (+).
		if v, _, _ := strings.Cut(s.Version, "+"); strings.Contains(v, "-") {
			note = "the newest version, a pre-release: OLM v1 chooses pre-releases when no range is given; --version \">=0.0.0\" (any release) leaves them out"
		}
		if s.Range != "" {
			note = "chosen from the range " + echo.Text(s.Range) + "; a bump changes this line and digest (olm-cmp resolve --write)"
		}
		w.line("  version: " + quoted(s.Version) + "  # " + note)
	default:
		w.line("  bundle: " + scalar(s.Bundle))
		if s.Version != "" {
			w.line("  version: " + quoted(s.Version) + "  # a bump changes this line; olm-cmp resolve --write then pins it")
		}
	}
	if s.Digest != "" {
		w.line("  digest: " + quoted(s.Digest) + "  # the pin (docs/spec.md, Pinning)")
	}
	w.trailing("  namespace: "+scalar(p.Namespace), p.nsNote)
	if p.PodSecurity != "" {
		w.line("  namespaceLabels:  # the Pod Security level the SecurityContextConstraints finding below asks for")
		note := ""
		if p.podSecurityTODO {
			note = TODO + " privileged lets the pods do anything; set baseline or restricted if they need less (the SCCs they name say no level)"
		}
		w.trailing("    "+podSecurityEnforce+": "+p.PodSecurity, note)
	}
	if len(p.Watch) > 0 {
		w.trailing("  watchNamespaces: "+flow(p.Watch), p.watchNote)
	} else if p.watchNote != "" {
		w.comment("  ", "watchNamespaces: "+p.watchNote)
	}
	if len(p.Exclude) > 0 {
		w.comment("  ", p.excludeNote)
		w.line("  exclude: " + flow(p.Exclude))
	}
	if len(p.ExcludeFiles) > 0 {
		w.line("  excludeFiles: " + flow(p.ExcludeFiles) + "  # skipped unread (--exclude-file): the bundle does not load with them")
	}
	if len(p.OtherTools) > 0 {
		w.comment("  ", "the files beside this one that belong to other tools, not the cluster: "+OtherToolsNote(p.OtherTools))
		w.line("  extraManifests:")
		w.line("    exclude: " + flow(p.otherToolGlobs()))
	}
	if len(p.Examples) > 0 {
		w.comment("  ", "the CSV's alm-examples ("+echo.Text(strings.Join(p.Examples, ", "))+"): uncomment to render them as custom resources, in the last wave")
		w.comment("  ", "examples: "+echo.Text(flow(p.Examples[:1])))
	}
	if len(p.images) > 0 || p.pullSecrets {
		w.comment("  ", "what the accepted image findings below stand in for:")
		// Commented-out YAML: never wrapped, so uncommenting it works.
		if p.pullSecrets {
			w.line("  # imagePullSecrets: [pull-secret]   # a Secret you create in the namespace")
		}
		if len(p.images) > 0 {
			w.line("  # images:                           # the reference to run instead, pinned by digest")
			for _, img := range p.images {
				w.line("  #   " + oneLine(scalar(img)) + ": registry.example.com/REPOSITORY@sha256:DIGEST")
			}
		}
	}
	if p.AuthReaderBinding {
		w.comment("  ", p.authReaderNote)
		w.line("  authReaderBinding: true")
	}
	w.list("clusterAPIs", p.ClusterAPIs)
	w.list("accept", p.Accept)
	return []byte(w.String())
}

type textWriter struct{ strings.Builder }

func (w *textWriter) line(s string) { w.WriteString(s + "\n") }

// trailing writes s with a trailing comment (none when note is empty).
func (w *textWriter) trailing(s, note string) {
	if note == "" {
		w.line(s)
		return
	}
	w.line(s + "  # " + oneLine(note))
}

// comment writes text as comment lines at indent, wrapped at commentWidth.
func (w *textWriter) comment(indent, text string) {
	for _, l := range wrap(oneLine(text), commentWidth-len(indent)-2) {
		w.line(indent + "# " + l)
	}
}

func (w *textWriter) list(key string, groups []Group) {
	if len(groups) == 0 {
		return
	}
	w.line("  " + key + ":")
	for _, g := range groups {
		for _, h := range g.Header {
			w.comment("  ", h)
		}
		for _, e := range g.Entries {
			for _, a := range e.Above {
				w.comment("  ", a)
			}
			w.trailing("  - "+scalar(e.Value), e.Trailing)
		}
	}
}

// oneLine keeps a comment on its line whatever bundle text it quotes: its
// control characters (a newline first) are escaped.
func oneLine(s string) string { return echo.Text(s) }

// wrap splits s at spaces into lines of at most width characters (a word
// longer than that stays whole).
func wrap(s string, width int) []string {
	var lines []string
	for len(s) > width {
		cut := strings.LastIndex(s[:width+1], " ")
		if cut <= 0 {
			if cut = strings.Index(s, " "); cut < 0 {
				break
			}
		}
		lines = append(lines, s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(lines, s)
}

// plain matches the scalars written without quotes: they read as the same
// string in YAML 1.1 and 1.2 (no number, boolean, null or indicator).
var plain = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_./][A-Za-z0-9_./:@-]*$`) })

// yaml11Words are plain scalars a YAML 1.1 reader would not see as strings.
var yaml11Words = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true, "true": true, "false": true, "null": true}

// scalar writes s as a YAML string: plain when that is unambiguous, else a
// JSON string (a valid double-quoted YAML scalar).
func scalar(s string) string {
	if plain().MatchString(s) && !yaml11Words[strings.ToLower(s)] && !strings.HasSuffix(s, ":") && !strings.Contains(s, ": ") {
		return s
	}
	return quoted(s)
}

// quoted always quotes: versions ("1.10") and digests.
func quoted(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// flow writes a list of strings on one line.
func flow(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = scalar(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Lines counts the lines of text, and the entries marked TODO (a value
// whose trailing comment starts with TODO:, not a comment line).
func Lines(text []byte) (total, todo int) {
	for _, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		total++
		if !strings.HasPrefix(strings.TrimSpace(l), "#") && strings.Contains(l, "  # "+TODO) {
			todo++
		}
	}
	return total, todo
}

// OtherToolsNote says what each left-out file is: "a.yaml (an Argo CD
// Application), b.yaml (a kustomization)".
func OtherToolsNote(fs []render.OtherToolFile) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = echo.Text(f.File) + " (" + echo.Text(f.Why) + ")"
	}
	return strings.Join(parts, ", ")
}
