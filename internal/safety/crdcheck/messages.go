package crdcheck

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// goQuoted is a Go-quoted string as crdify prints values ("%q").
var goQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// plainMessage rewrites a crdify message, "<what changed> : <Go-formatted
// values>", in plain words: `type changed : "string" -> "integer"` becomes
// "type changed: string -> integer", an empty value "none", a list
// `[b a]` "a, b" (sorted); JSON values (defaults, enum values) keep their quotes.
func plainMessage(msg string) string {
	what, detail, ok := strings.Cut(msg, " : ")
	if !ok {
		if what, detail, ok = strings.Cut(msg, ": "); !ok {
			return msg
		}
	}
	if strings.HasPrefix(detail, "[") && strings.HasSuffix(detail, "]") {
		// crdify lists sets (required fields, enum values) in random
		// order: sorted, the same finding reads the same every run.
		items := strings.Fields(detail[1 : len(detail)-1])
		slices.Sort(items)
		detail = strings.Join(items, ", ")
	} else {
		detail = goQuoted.ReplaceAllStringFunc(detail, func(q string) string {
			s, err := strconv.Unquote(q)
			if err != nil {
				return q
			}
			if s == "" {
				return "none"
			}
			return s
		})
	}
	if detail == "" {
		detail = "none"
	}
	return what + ": " + detail
}

// unhandledField matches a changed line of crdify's unhandled diff (a Go
// struct diff): "-	XPreserveUnknownFields: &true," → XPreserveUnknownFields.
// go-cmp spaces its output with ASCII or no-break spaces at random (to
// discourage parsing it), so both count as space.
var unhandledField = regexp.MustCompile(`^[\s\p{Zs}]*[-+][\s\p{Zs}]*([A-Za-z][A-Za-z0-9]*):`)

// unhandledMessage shortens crdify's unhandled-change message (a diff of Go
// structs) to the names of the schema fields that changed.
func unhandledMessage(raw string) string {
	var fields []string
	for _, line := range strings.Split(raw, "\n") {
		if m := unhandledField.FindStringSubmatch(line); m != nil {
			fields = append(fields, m[1])
		}
	}
	slices.Sort(fields)
	fields = slices.Compact(fields)
	if len(fields) == 0 {
		return "a change no safety rule covers"
	}
	return "a change no safety rule covers, in " + strings.Join(fields, ", ")
}
