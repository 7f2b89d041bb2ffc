package upgrade

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// gitVar is one variable of a Git config file, named as `git config
// --list` names it: the section in lower case, the subsection as written,
// the key in lower case ("remote.origin.url"). HasValue is false for a key
// written without '=' (git's boolean true).
type gitVar struct {
	Name     string
	Value    string
	HasValue bool
}

// errGitConfig is a config git itself refuses ("bad config line N").
var errGitConfig = errors.New("not a Git config git reads")

// parseGitConfig reads data as git reads a config file (config.c,
// git_parse_source), so a remote's URL is the one git fetches from:
//
//   - '#' and ';' start a comment outside double quotes, also after a value;
//   - a value's whitespace is trimmed at both ends, each run inside kept as
//     spaces; double quotes keep it as it is and are removed;
//   - in a value, \" \\ \n \t \b are escapes, a backslash before the line
//     break continues the value on the next line, any other escape is an
//     error;
//   - section and key names are case-insensitive (letters, digits, '-';
//     a section also '.', the old [section.subsection] form); a
//     subsection is quoted, case-sensitive, a backslash taking the next
//     character as it is;
//   - a key may follow its section header on the same line;
//   - CRLF line ends read as LF; a UTF-8 byte order mark is skipped.
//
// Whatever git refuses is an error (errGitConfig, with the line): git
// refuses the whole file then, so nothing of it is used. TestGitConfigOracle
// holds this against git's own reading of the same files.
func parseGitConfig(data []byte) ([]gitVar, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // git skips a UTF-8 byte order mark
	r := &gitConfigReader{data: data, line: 1}
	var vars []gitVar
	prefix := "" // "section." after a header; git reads a key before any as it is
	comment := false
	for {
		c := r.next()
		switch {
		case c == '\n':
			if r.eof {
				return vars, nil
			}
			comment = false
			continue
		case comment || gitSpace(c):
			continue
		case c == '#' || c == ';':
			comment = true
			continue
		case c == '[':
			s, err := r.header()
			if err != nil {
				return nil, r.fail()
			}
			prefix = s + "."
			continue
		case !asciiLetter(c):
			return nil, r.fail()
		}
		key, value, hasValue, err := r.variable(c)
		if err != nil {
			return nil, r.fail()
		}
		if i := strings.IndexByte(value, 0); i >= 0 {
			value = value[:i] // git's C strings end there
		}
		vars = append(vars, gitVar{Name: prefix + key, Value: value, HasValue: hasValue})
	}
}

// gitConfigReader hands out a config's bytes as git's get_next_char does:
// CRLF as LF, and a LF (with eof set) at the end.
type gitConfigReader struct {
	data []byte
	pos  int
	line int
	eof  bool
}

func (r *gitConfigReader) next() byte {
	if r.pos >= len(r.data) {
		r.eof = true
		return '\n'
	}
	c := r.data[r.pos]
	r.pos++
	if c == '\r' && r.pos < len(r.data) && r.data[r.pos] == '\n' {
		c = '\n'
		r.pos++
	}
	if c == '\n' {
		r.line++
	}
	return c
}

func (r *gitConfigReader) fail() error {
	return fmt.Errorf("line %d: %w", r.line, errGitConfig)
}

// header reads a section header after its '[': the section in lower case,
// ".subsection" when quoted.
func (r *gitConfigReader) header() (string, error) {
	var b strings.Builder
	for {
		c := r.next()
		switch {
		case r.eof:
			return "", errGitConfig
		case c == ']' && b.Len() == 0:
			return "", errGitConfig // no section name
		case c == ']':
			return b.String(), nil
		case gitSpace(c):
			return r.subsection(&b)
		case !gitKeyChar(c) && c != '.':
			return "", errGitConfig
		}
		b.WriteByte(asciiLower(c))
	}
}

// subsection reads `"name"]` after a section name and its whitespace.
func (r *gitConfigReader) subsection(b *strings.Builder) (string, error) {
	c := r.next()
	for gitSpace(c) && !r.eof {
		c = r.next()
	}
	if c != '"' {
		return "", errGitConfig
	}
	b.WriteByte('.')
	for {
		c := r.next()
		if c == '\n' {
			return "", errGitConfig
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = r.next(); c == '\n' {
				return "", errGitConfig
			}
		}
		b.WriteByte(c)
	}
	if r.next() != ']' {
		return "", errGitConfig
	}
	return b.String(), nil
}

// variable reads a key from its first letter c, then its value if '='
// follows.
func (r *gitConfigReader) variable(c byte) (key, value string, hasValue bool, err error) {
	var k strings.Builder
	k.WriteByte(asciiLower(c))
	for {
		c = r.next()
		if r.eof || !gitKeyChar(c) {
			break
		}
		k.WriteByte(asciiLower(c))
	}
	for c == ' ' || c == '\t' {
		c = r.next()
	}
	if c == '\n' {
		return k.String(), "", false, nil
	}
	if c != '=' {
		return "", "", false, errGitConfig
	}
	value, err = r.value()
	return k.String(), value, true, err
}

// value reads a value after its '=', to the end of its line (or of the
// lines a trailing backslash joins).
func (r *gitConfigReader) value() (string, error) {
	var v strings.Builder
	quote, comment, space := false, false, 0
	for {
		c := r.next()
		if c == '\n' {
			if quote {
				return "", errGitConfig
			}
			return v.String(), nil
		}
		if comment {
			continue
		}
		if gitSpace(c) && !quote {
			if v.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v.WriteByte(' ')
		}
		switch c {
		case '\\':
			switch c = r.next(); c {
			case '\n': // a continuation line (at the end of the file, the end of the value)
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", errGitConfig
			}
		case '"':
			quote = !quote
			continue
		}
		v.WriteByte(c)
	}
}

// gitSpace is git's isspace: space, tab, LF, CR (not git's ctype for
// vertical tab or form feed).
func gitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func asciiLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func gitKeyChar(c byte) bool { return asciiLetter(c) || c >= '0' && c <= '9' || c == '-' }

func asciiLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
