package healthcheck

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
)

// The script of a kind is the header template (what its schema offers, as the `judge` table)
// followed by the shared rule: Argo CD runs each argocd-cm script on its own, with nothing to
// load, so the rule is copied into each, as deploy/argocd's _<family>.lua parts are.
var (
	//go:embed lua/check.lua.tmpl
	headerText string
	//go:embed lua/_generic.lua
	genericLua string

	// header is parsed at the first script: most commands never write one.
	header = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("check.lua").Parse(headerText))
	})
)

// Script is the Lua health check of r's kind: a literal for an argocd-cm value (no tabs, no
// carriage returns, one final newline).
func (r Rule) Script() string {
	var b bytes.Buffer
	data := struct {
		Rule
		EnumText, PhaseFieldLua, HealthyLua, DegradedLua string
	}{
		Rule:          r,
		EnumText:      commentText(strings.Join(r.PhaseEnum, ", ")),
		PhaseFieldLua: "nil",
		HealthyLua:    luaSet(r.Healthy),
		DegradedLua:   luaSet(r.Degraded),
	}
	data.Group, data.Kind, data.CRD, data.Version = commentText(r.Group), commentText(r.Kind), commentText(r.CRD), commentText(r.Version)
	if r.PhaseField != "" {
		data.PhaseFieldLua = luaString(r.PhaseField)
	}
	if err := header().Execute(&b, data); err != nil {
		panic(fmt.Sprintf("healthcheck: header template: %v", err)) // a fixed template over fixed types
	}
	b.WriteString(genericLua)
	return b.String()
}

// luaSet is a Lua table with the strings as keys ({["Running"] = true, ...}), in order: on
// one line when it is short.
func luaSet(values []string) string {
	if len(values) == 0 {
		return "{}"
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = "[" + luaString(v) + "] = true"
	}
	if one := "{" + strings.Join(parts, ", ") + "}"; len(one) <= 80 {
		return one
	}
	// a long set, one value a line, stays readable in argocd-cm
	return "{\n    " + strings.Join(parts, ",\n    ") + ",\n  }"
}

// luaString quotes s as a Lua string literal. Values come from a CRD (a schema enum), so
// anything but printable ASCII, quotes and backslashes is a decimal escape (\ddd, which every
// Lua reads, gopher-lua included): no value can end the literal or the line.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			fmt.Fprintf(&b, "\\%03d", c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// commentText makes s safe inside a Lua line comment: control characters and non-ASCII bytes
// become "?", so s cannot start a new line of code; long text is cut.
func commentText(s string) string {
	const max = 200
	var b strings.Builder
	for i := 0; i < len(s) && i < max; i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			c = '?'
		}
		b.WriteByte(c)
	}
	if len(s) > max {
		b.WriteString("...")
	}
	return b.String()
}
