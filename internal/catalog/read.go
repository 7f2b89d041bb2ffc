package catalog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// Limits on what one catalog may make the reader hold. A catalog is read in
// one streaming pass, an object at a time, and keeps only the fields
// choosing needs (object), so memory follows the largest object and the
// package asked for, not the catalog's size.
const (
	// maxObjectBytes caps one catalog object (a JSON value, a YAML
	// document). opm's largest honest objects are bundles carrying their
	// manifests as olm.bundle.object properties: a few MB.
	maxObjectBytes = 32 << 20
	// maxObjectsPerFile caps the objects of one file, the same bound
	// yamlsafe puts on a YAML file's items.
	maxObjectsPerFile = 1 << 19
	// maxPackageItems caps what one package keeps: its bundles, their
	// property types, and its channel and deprecation entries. Real
	// packages hold a few thousand.
	maxPackageItems = 1 << 17
	// maxPackageBytes caps the bytes of the strings one package keeps
	// (object.size): items alone leave each one's size to the catalog.
	// Real packages keep a few MB.
	maxPackageBytes = 64 << 20
	// maxValueBytes caps a property value kept for choosing (olm.package's
	// {packageName, version, release}); other values are skipped unread.
	maxValueBytes = 64 << 10
)

// object is one catalog object with only what choosing and validating use;
// the index stores these, so field names are short.
type object struct {
	Schema  string `json:"s"`
	Name    string `json:"n,omitempty"`
	Package string `json:"p,omitempty"`
	Image   string `json:"i,omitempty"`
	// Default is an olm.package's defaultChannel (internal/versions shows it).
	Default string  `json:"dc,omitempty"`
	Entries []entry `json:"e,omitempty"`
	// Types are the bundle's property types, in order.
	Types []string `json:"t,omitempty"`
	// Versions are the bundle's olm.package property values.
	Versions []packageValue `json:"v,omitempty"`
	// File and Doc say where the object is (doc counts from 1), for errors.
	File string `json:"f"`
	Doc  int    `json:"d"`
	// Err is why the object could not be read, reported only when its
	// package is asked for (the rest of the catalog stays usable).
	Err string `json:"x,omitempty"`
}

type entry struct {
	Name      string   `json:"name,omitempty" yaml:"name"`
	Replaces  string   `json:"replaces,omitempty" yaml:"replaces"`
	Skips     []string `json:"skips,omitempty" yaml:"skips"`
	SkipRange string   `json:"skipRange,omitempty" yaml:"skipRange"`
	// Reference is a deprecation entry's (olm.deprecations) target.
	Reference *reference `json:"reference,omitempty" yaml:"reference"`
}

type reference struct {
	Schema string `json:"schema" yaml:"schema"`
	Name   string `json:"name" yaml:"name"`
}

type packageValue struct {
	PackageName string  `json:"p,omitempty" yaml:"packageName"`
	Version     string  `json:"v" yaml:"version"`
	Release     *string `json:"r,omitempty" yaml:"release"`
}

// size is the bytes of the strings o keeps.
func (o *object) size() int {
	n := len(o.Schema) + len(o.Name) + len(o.Package) + len(o.Image) + len(o.Default) + len(o.File)
	for _, e := range o.Entries {
		n += len(e.Name) + len(e.Replaces) + len(e.SkipRange)
		for _, s := range e.Skips {
			n += len(s)
		}
		if e.Reference != nil {
			n += len(e.Reference.Schema) + len(e.Reference.Name)
		}
	}
	for _, t := range o.Types {
		n += len(t)
	}
	for _, v := range o.Versions {
		n += len(v.PackageName) + len(v.Version)
		if v.Release != nil {
			n += len(*v.Release)
		}
	}
	return n
}

// key is the package an object belongs to ("" for objects choosing ignores).
func (o *object) key() string {
	switch o.Schema {
	case "olm.package":
		return o.Name
	case "olm.channel", "olm.bundle", "olm.deprecations":
		return o.Package
	}
	return ""
}

// at names the object inside a message: "catalog.json document 3".
func (o *object) at() string {
	return fmt.Sprintf("%s document %d", echo.Short(o.File), o.Doc)
}

// where names the object for errors.
func (o *object) where() string {
	return fmt.Sprintf("catalog file %s: document %d", echo.Short(o.File), o.Doc)
}

// readAll streams every catalog object of fsys to fn, file by file in
// lexical order: .json, .yaml and .yml files anywhere under the root, minus
// what .indexignore files exclude. only, when not empty, is the one package
// whose objects fn wants: the others are skipped as early as their fields
// allow. It stops at ctx's end.
func readAll(ctx context.Context, fsys fs.FS, only string, fn func(*object) error) error {
	ignores := map[string][]string{} // directory → .indexignore patterns
	total := 0                       // patterns in all
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			patterns, err := readIgnore(fsys, path.Join(p, ".indexignore"))
			if err != nil {
				return err
			}
			if patterns != nil {
				// Bounded over the catalog too: a file is matched against
				// the patterns of every directory above it.
				if total += len(patterns); total > maxIgnorePatterns {
					return fmt.Errorf("catalog: its .indexignore files hold over %d patterns in all: not a catalog olm-cmp reads (opm's hold a few patterns)", maxIgnorePatterns)
				}
				ignores[p] = patterns
			}
		}
		if p != "." && ignored(ignores, p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || d.Name() == ".indexignore" {
			return nil
		}
		switch path.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if !d.Type().IsRegular() {
			// A symbolic link is followed (fsys keeps it inside the
			// catalog); a FIFO or device would block or never end.
			if fi, err := fs.Stat(fsys, p); err != nil || !fi.Mode().IsRegular() {
				return fmt.Errorf("catalog file %s is not a regular file: remove it from the catalog directory", echo.Short(p))
			}
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return readFile(ctx, p, f, only, fn)
	})
}

// Bounds of one .indexignore file: every catalog file below its directory
// is matched against each of its patterns (opm's catalogs hold a handful).
const (
	maxIgnoreBytes    = 64 << 10
	maxIgnorePatterns = 1000
)

// readIgnore returns the patterns of the .indexignore file at name (nil
// when there is none), refusing one past the bounds above.
func readIgnore(fsys fs.FS, name string) ([]string, error) {
	// Stat first: opening a FIFO blocks until a writer comes.
	fi, err := fs.Stat(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("catalog file %s is not a regular file: remove it from the catalog directory", echo.Short(name))
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxIgnoreBytes {
		return nil, fmt.Errorf("catalog file %s: over %d bytes: not an .indexignore olm-cmp reads (opm's hold a few patterns)", echo.Short(name), maxIgnoreBytes)
	}
	patterns := parseIgnore(data)
	if len(patterns) > maxIgnorePatterns {
		return nil, fmt.Errorf("catalog file %s: over %d patterns: not an .indexignore olm-cmp reads (opm's hold a few patterns)", echo.Short(name), maxIgnorePatterns)
	}
	return patterns, nil
}

// readFile reads one catalog file: a JSON stream (what opm writes, and what
// catalogs are in practice) with encoding/json's streaming decoder, an
// object at a time; anything else as YAML through yamlsafe.
func readFile(ctx context.Context, name string, r io.Reader, only string, fn func(*object) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if skip, first := leading(br); first == '{' {
		br.Discard(skip) // the JSON decoder reads no byte order mark
		done, err := readJSON(ctx, name, br, only, fn)
		if err == nil || done > 0 {
			return err
		}
		// Not one JSON value at the start: YAML (a flow mapping) after all.
		// Nothing was passed on: read the file again from the start.
		if s, ok := r.(io.Seeker); ok {
			if _, serr := s.Seek(0, io.SeekStart); serr == nil {
				return readYAML(ctx, name, r, only, fn)
			}
		}
		return fmt.Errorf("catalog file %s: %w", echo.Short(name), err)
	}
	return readYAML(ctx, name, br, only, fn)
}

// leading returns the first byte of br's content after white space and a
// byte order mark, and how many bytes come before it, consuming nothing
// (YAML indentation matters).
func leading(br *bufio.Reader) (skip int, first byte) {
	data, _ := br.Peek(br.Size())
	rest := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("\ufeff")), " \t\r\n")
	if len(rest) == 0 {
		return 0, 0
	}
	return len(data) - len(rest), rest[0]
}

// jsonObject is the JSON form of a catalog object, as far as choosing reads it.
type jsonObject struct {
	Schema         string         `json:"schema"`
	Name           string         `json:"name"`
	Package        string         `json:"package"`
	Image          string         `json:"image"`
	DefaultChannel string         `json:"defaultChannel"`
	Entries        []entry        `json:"entries"`
	Properties     []jsonProperty `json:"properties"`
}

type jsonProperty struct {
	Type  string    `json:"type"`
	Value smallJSON `json:"value"`
}

// smallJSON keeps a value only when it is small enough to be one choosing
// reads: a 12 KB icon in olm.csv.metadata is skipped, not copied.
type smallJSON struct {
	raw   []byte
	large bool
}

func (s *smallJSON) UnmarshalJSON(data []byte) error {
	if len(data) > maxValueBytes {
		s.raw, s.large = nil, true
		return nil
	}
	s.raw = bytes.Clone(data)
	return nil
}

// boundedReader refuses to read more than max bytes past mark, so the JSON
// decoder, which buffers a whole value before decoding it, never holds
// more than one object of maxObjectBytes (and what it read ahead).
type boundedReader struct {
	r          io.Reader
	read, mark int64
	max        int64
}

var errObjectTooLarge = errors.New("object too large")

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.read-b.mark > b.max {
		return 0, errObjectTooLarge
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// readJSON streams the JSON values of one file. done counts the objects
// passed to fn (readFile falls back to YAML only when it is 0).
func readJSON(ctx context.Context, name string, r io.Reader, only string, fn func(*object) error) (done int, err error) {
	br := &boundedReader{r: r, max: maxObjectBytes}
	dec := json.NewDecoder(br)
	for doc := 1; ; doc++ {
		if doc > maxObjectsPerFile {
			return done, fmt.Errorf("catalog file %s: more than %d objects: not a catalog olm-cmp reads (split it, one file per package as opm writes it)", echo.Short(name), maxObjectsPerFile)
		}
		if doc%256 == 0 {
			if err := ctx.Err(); err != nil {
				return done, err
			}
		}
		var jo jsonObject
		err := dec.Decode(&jo)
		if end := dec.InputOffset(); err == nil && end-br.mark > maxObjectBytes {
			err = errObjectTooLarge
		} else {
			br.mark = end
		}
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return done, nil
		case errors.Is(err, errObjectTooLarge):
			return done, fmt.Errorf("catalog file %s: document %d is over %d MiB: not a catalog object olm-cmp reads", echo.Short(name), doc, maxObjectBytes>>20)
		case errors.As(err, &typeErr):
			// The value was read whole; only a field has the wrong type. It
			// fails the package it belongs to, not the catalog.
		case err != nil:
			if done == 0 && doc == 1 {
				return 0, fmt.Errorf("not JSON: %w", err)
			}
			return done, fmt.Errorf("catalog file %s: document %d: not valid JSON (%s)", echo.Short(name), doc, echo.Short(err.Error()))
		}
		o := object{Schema: jo.Schema, Name: jo.Name, Package: jo.Package, Image: jo.Image, File: name, Doc: doc}
		if o.Schema == "olm.package" {
			o.Default = jo.DefaultChannel
		}
		if only != "" && o.key() != only {
			done++
			continue
		}
		if typeErr != nil {
			o.Err = fmt.Sprintf("field %s: expected %s, got a JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
		} else if o.Schema == "olm.bundle" || o.Schema == "olm.channel" || o.Schema == "olm.deprecations" {
			o.Entries = jo.Entries
			for _, p := range jo.Properties {
				o.Types = append(o.Types, intern(p.Type))
				if p.Type != "olm.package" {
					continue
				}
				var v struct {
					PackageName string  `json:"packageName"`
					Version     string  `json:"version"`
					Release     *string `json:"release"`
				}
				if p.Value.large {
					o.Err = fmt.Sprintf("bundle %s: olm.package property is over %d KiB", echo.Quote(o.Name), maxValueBytes>>10)
				} else if err := json.Unmarshal(p.Value.raw, &v); err != nil {
					o.Err = fmt.Sprintf("bundle %s: olm.package property: %s", echo.Quote(o.Name), jsonValueError(err))
				}
				o.Versions = append(o.Versions, packageValue(v))
			}
		}
		done++
		if err := fn(&o); err != nil {
			return done, err
		}
	}
}

// jsonValueError words a property value's decoding error for a catalog's
// author: the field and the types, not encoding/json's Go struct names.
func jsonValueError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("field %s: expected %s, got a JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
	}
	return "not a JSON object with packageName and version: " + echo.Short(err.Error())
}

// yamlObject is the YAML form of a catalog object, as far as choosing reads it.
type yamlObject struct {
	Schema         string  `yaml:"schema"`
	Name           string  `yaml:"name"`
	Package        string  `yaml:"package"`
	Image          string  `yaml:"image"`
	DefaultChannel string  `yaml:"defaultChannel"`
	Entries        []entry `yaml:"entries"`
	Properties     []struct {
		Type  string    `yaml:"type"`
		Value yaml.Node `yaml:"value"`
	} `yaml:"properties"`
}

// readYAML reads a YAML catalog file a document at a time (split at its
// "---" lines, which end any YAML content before them), each through
// yamlsafe's item and alias limits, so a large YAML catalog costs the
// memory of its largest document, not the file's.
func readYAML(ctx context.Context, name string, r io.Reader, only string, fn func(*object) error) error {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	var doc bytes.Buffer
	n, started := 0, false
	flush := func() error {
		if !started && len(bytes.TrimSpace(doc.Bytes())) == 0 {
			doc.Reset()
			return nil // nothing before the first "---"
		}
		started = true
		n++
		defer doc.Reset()
		return readYAMLDoc(ctx, name, n, doc.Bytes(), only, fn)
	}
	// lineStart: the next slice starts a line. A line longer than the
	// buffer comes in pieces, and a piece starting with "---" (inside a
	// long description) starts no document: opm would not split there.
	lineStart := true
	for {
		line, err := br.ReadSlice('\n')
		atStart := lineStart
		lineStart = err != bufio.ErrBufferFull
		if err == bufio.ErrBufferFull {
			err = nil // a long line: keep reading it
		}
		if atStart && isDocStart(line) {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			started = true
			line = line[3:] // "--- {a: b}" holds content after the marker
		}
		doc.Write(line)
		if doc.Len() > maxObjectBytes {
			return fmt.Errorf("catalog file %s: document %d is over %d MiB: not a catalog object olm-cmp reads", echo.Short(name), n+1, maxObjectBytes>>20)
		}
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return err
		}
	}
}

// isDocStart reports whether line starts a YAML document ("---" alone or
// followed by a space).
func isDocStart(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r'
}

func readYAMLDoc(ctx context.Context, name string, n int, data []byte, only string, fn func(*object) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	docs, err := yamlsafe.Parse(data)
	if err != nil {
		return fmt.Errorf("catalog file %s: document %d: %s", echo.Short(name), n, echo.Text(strings.TrimPrefix(err.Error(), "document 1: ")))
	}
	for _, doc := range docs {
		if doc == nil || doc.Kind != yaml.MappingNode {
			continue
		}
		rn := yaml.NewRNode(doc)
		o := object{Schema: scalar(rn, "schema"), Name: scalar(rn, "name"), Package: scalar(rn, "package"), File: name, Doc: n}
		if o.key() == "" || (only != "" && o.key() != only) {
			continue // most of a catalog is other packages: skip before decoding
		}
		var yo yamlObject
		if err := doc.Decode(&yo); err != nil {
			o.Err = yamlTypeError(err)
		} else {
			o.Image, o.Entries = yo.Image, yo.Entries
			if o.Schema == "olm.package" {
				o.Default = yo.DefaultChannel
			}
			for _, p := range yo.Properties {
				o.Types = append(o.Types, intern(p.Type))
				if p.Type != "olm.package" {
					continue
				}
				var v packageValue
				if err := p.Value.Decode(&v); err != nil {
					o.Err = fmt.Sprintf("bundle %s: olm.package property: %s", echo.Quote(o.Name), yamlTypeError(err))
				}
				o.Versions = append(o.Versions, v)
			}
		}
		if err := fn(&o); err != nil {
			return err
		}
	}
	return nil
}

// intern returns the usual property types as shared constants, so
// thousands of bundles do not each hold their own copies.
func intern(s string) string {
	if k, ok := knownTypes[s]; ok {
		return k
	}
	return s
}

var knownTypes = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"olm.package", "olm.gvk", "olm.csv.metadata", "olm.bundle.mediatype", "olm.bundle.object",
		"olm.package.required", "olm.gvk.required", "olm.constraint", "olm.maxOpenShiftVersion", "olm.deprecations"} {
		m[s] = s
	}
	return m
}()

// yamlTypeError says that a YAML catalog object has a field of the wrong
// type without yaml.v3's Go types ("cannot unmarshal !!int into struct {
// Type string …}", over several lines). Its line numbers count from the
// document's "---", so they are left out: the message names the document.
func yamlTypeError(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return "a field has the wrong type for a file-based catalog object (opm validate refuses it): see the olm.package, olm.channel and olm.bundle schemas"
	}
	return echo.Short(strings.TrimPrefix(err.Error(), "yaml: "))
}
