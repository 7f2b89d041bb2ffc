package diff

import (
	"strings"
)

// stripProvenance returns doc without its top-level metadata.annotations
// entries whose keys start with IgnoredAnnotationPrefix, working on the text
// as the renderer wrote it (block style: "metadata:" at column 0, its keys
// indented two spaces, annotations four), which is what the diff shows.
// want is how many such annotations the parsed object has: when the text
// does not hold exactly that many in that form, ok is false and the caller
// re-serializes the node instead. Parsing the render again and writing it
// back cost most of diff's time; cutting lines costs next to nothing.
func stripProvenance(doc string, want int) (string, bool) {
	if want == 0 {
		return doc, true
	}
	var b strings.Builder
	b.Grow(len(doc))
	inMeta, inAnn, dropping, removed, kept := false, false, false, 0, 0
	annLine := -1 // b.Len() where "  annotations:\n" starts
	for rest := doc; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = ""
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		body := strings.TrimRight(line[indent:], "\r\n")
		switch {
		case body == "" || strings.HasPrefix(body, "#"):
			// blank lines and comments: keep (the renderer writes none)
		case indent == 0:
			inMeta, inAnn, dropping = body == "metadata:", false, false
		case inMeta && indent == 2:
			inAnn, dropping = body == "annotations:", false
			if inAnn {
				annLine = b.Len()
			}
		case inAnn && indent == 4:
			dropping = strings.HasPrefix(strings.TrimLeft(body, `'"`), IgnoredAnnotationPrefix)
			if dropping {
				removed++
				continue
			}
			kept++
		case inAnn && indent > 4 && dropping:
			continue // a continuation line of a dropped value
		case inAnn && indent < 4:
			inAnn, dropping = false, false
		}
		b.WriteString(line)
	}
	if removed != want {
		return "", false
	}
	out := b.String()
	if kept == 0 && annLine >= 0 {
		// Every annotation was provenance: drop the empty mapping's key.
		out = out[:annLine] + strings.SplitAfterN(out[annLine:], "\n", 2)[1]
	}
	return out, true
}
