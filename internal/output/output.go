// Package output writes a render's result where the CLI was told to: one
// YAML stream or one JSON List on a writer, or one file per object in a
// directory (--output-dir) replaced as a whole; and the lines printed about
// a render that succeeded (PrintNotes).
package output

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
)

// Formats of a render's output (render -o).
const (
	YAML = "yaml"
	JSON = "json"
)

// Write writes res to w in format, or, with dir, into the directory dir
// (WriteDir).
func Write(w io.Writer, res *render.Result, format, dir string) error {
	if dir != "" {
		return WriteDir(dir, format, res)
	}
	if format == JSON {
		data, err := ListJSON(res)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return res.WriteYAML(w)
}

// ObjectJSON is manifest i of res as JSON: the plugin's JSON form
// (Result.JSON), or, for an object that form keeps in YAML (see
// transform.SerializeJSON), its YAML read as the repo-server reads it.
func ObjectJSON(res *render.Result, i int) ([]byte, error) {
	js := []byte(res.JSON[i])
	if json.Valid(js) {
		return js, nil
	}
	js, err := sigsyaml.YAMLToJSON([]byte(res.Manifests[i]))
	if err != nil {
		return nil, fmt.Errorf("object %d of the render cannot be written as JSON: %w", i+1, err)
	}
	return js, nil
}

// ListJSON is every object of res in one JSON document: a v1 List (as
// `kubectl get -o json` prints several objects), its items in apply order,
// one per line. kubectl apply -f and jq '.items[]' take it as is.
func ListJSON(res *render.Result) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	for i := range res.JSON {
		js, err := ObjectJSON(res, i)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.Write(js)
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}

// Marker is the file that says olm-cmp wrote a directory, so the
// next render --output-dir may replace it.
const Marker = ".olm-cmp-output"

const markerText = "Written by olm-cmp render --output-dir: the next render replaces this whole directory.\n"

// WriteDir writes one file per object into a temporary sibling of dir,
// then puts it in dir's place by rename: dir holds the old render or the new
// one, never a mix. An existing dir is replaced only when olm-cmp wrote it
// (it holds Marker) or it is empty: it could be anything.
func WriteDir(dir, format string, res *render.Result) error {
	dir = filepath.Clean(dir)
	if err := Replaceable(dir); err != nil {
		return err
	}
	names := FileNames(res, format)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("--output-dir %s: %w", dir, errors.Unwrap(err))
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.WriteFile(filepath.Join(tmp, Marker), []byte(markerText), 0o644); err != nil {
		return fmt.Errorf("--output-dir %s: %w", dir, err)
	}
	for i, n := range names {
		data := []byte(res.Manifests[i])
		if format == JSON {
			js, err := ObjectJSON(res, i)
			if err != nil {
				return err
			}
			data = append(js, '\n')
		}
		if err := os.WriteFile(filepath.Join(tmp, n), data, 0o644); err != nil {
			return fmt.Errorf("--output-dir %s: writing %s: %w", dir, n, errors.Unwrap(err))
		}
	}
	// MkdirTemp made it 0700; an output directory is as readable as a file.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("--output-dir %s: %w", dir, err)
	}
	if err := replaceDir(tmp, dir); err != nil {
		return err
	}
	done = true
	return nil
}

// Replaceable refuses an existing dir olm-cmp did not write.
func Replaceable(dir string) error {
	if pi, err := os.Stat(filepath.Dir(dir)); err != nil || !pi.IsDir() {
		return fmt.Errorf("--output-dir %s: its parent directory %s does not exist: create it first", dir, filepath.Dir(dir))
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--output-dir %s: %w", dir, errors.Unwrap(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		// The swap renames the link, not what it points to.
		return fmt.Errorf("--output-dir %s: a symbolic link: give the directory itself (or a new or empty directory)", dir)
	case !fi.IsDir():
		return fmt.Errorf("--output-dir %s: exists and is not a directory: give a new or empty directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--output-dir %s: %w", dir, errors.Unwrap(err))
	}
	if len(entries) == 0 {
		return nil
	}
	if m, err := os.Lstat(filepath.Join(dir, Marker)); err == nil && m.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("--output-dir %s: the directory holds files olm-cmp did not write (it has no %s file), and the render replaces the whole directory: give a new or empty directory, or remove this one first", dir, Marker)
}

// exchangeDirs swaps two existing directories atomically, or fails
// (exchange; a variable so a test can take the other path).
var exchangeDirs = exchange

// replaceDir puts the directory tmp in dir's place. A new dir is one
// rename. An existing one is swapped with tmp in one step where the system
// can (Linux), then removed; elsewhere it is moved aside, tmp renamed to
// dir, and the old one removed: dir holds the old render or the new one,
// never a mix of both.
func replaceDir(tmp, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("--output-dir %s: %w", dir, errors.Unwrap(err))
		}
		return nil
	}
	if exchangeDirs(tmp, dir) == nil {
		os.RemoveAll(tmp) // the old render now
		return nil
	}
	o, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".old-")
	if err != nil {
		return fmt.Errorf("--output-dir %s: %w", dir, errors.Unwrap(err))
	}
	defer os.RemoveAll(o)
	old := filepath.Join(o, "dir")
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("--output-dir %s: moving the old render aside: %w", dir, errors.Unwrap(err))
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir) // put the old render back
		return fmt.Errorf("--output-dir %s: %w", dir, errors.Unwrap(err))
	}
	return nil
}

// objectMeta is what a file name is built from.
type objectMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// MaxFileName bounds a file name in bytes, extension included: every
// filesystem takes 255 (ext4, XFS, btrfs, APFS; NTFS 255 UTF-16 units, and
// the names are ASCII), and 200 leaves room for what tools add beside a
// file (an editor's .swp, a backup's ~ or .orig, a sync tool's prefix).
const MaxFileName = 200

// hashLen is how many hex digits of a name's SHA-256 a shortened name ends
// with: 48 bits, so two objects of one render whose long names share their
// first 180 bytes still get two names (and the numbering below makes sure).
const hashLen = 12

// FileNames names the file of each object of res: <wave>-<kind>-<name>
// and the extension of format, lower case, where <wave> is the rank of the
// object's sync wave among the render's waves (00 the first), so `ls` lists
// the files in apply order. Characters other than a-z, 0-9, '.', '-' and '_'
// become '_', so every filesystem takes the name (and a case-insensitive one
// cannot merge two). Objects whose names would still clash get their
// namespace (or API group) added. A name over MaxFileName bytes keeps its
// start and ends with a hash of the whole. Names still equal (same name
// twice) get a number, in apply order, the lowest that no other object's
// name holds: the names are distinct by construction, and deterministic for
// the same render.
func FileNames(res *render.Result, format string) []string {
	metas := make([]objectMeta, len(res.JSON))
	waves := make([]int, len(res.JSON))
	for i := range res.JSON {
		if js, err := ObjectJSON(res, i); err == nil {
			_ = json.Unmarshal(js, &metas[i]) // a rendered object always has these fields
		}
		waves[i], _ = strconv.Atoi(metas[i].Metadata.Annotations["argocd.argoproj.io/sync-wave"])
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(waves)))
	width := max(2, len(strconv.Itoa(len(distinct)-1)))
	ext := "." + format
	base := make([]string, len(metas))
	for i, m := range metas {
		rank, _ := slices.BinarySearch(distinct, waves[i])
		base[i] = fmt.Sprintf("%0*d-%s-%s", width, rank, safeName(m.Kind), safeName(m.Metadata.Name))
	}
	// Qualify the names that clash: the namespace, else the API group.
	clash := counts(base)
	for i, m := range metas {
		if clash[base[i]] > 1 {
			q := m.Metadata.Namespace
			if q == "" {
				q, _, _ = strings.Cut(m.APIVersion, "/")
			}
			base[i] += "-" + safeName(q)
		}
	}
	limit := MaxFileName - len(ext)
	for i := range base {
		base[i] = fitName(base[i], limit)
	}
	// Still clashing (same name twice): number them in apply order, each
	// the lowest number whose name no object has taken, so a numbered name
	// never lands on another object's own.
	clash = counts(base)
	taken := make(map[string]bool, len(base))
	for _, b := range base {
		if clash[b] == 1 {
			taken[b] = true
		}
	}
	out := make([]string, len(base))
	for i, b := range base {
		if clash[b] > 1 {
			for n := 1; ; n++ {
				c := fitName(b+"-"+strconv.Itoa(n), limit)
				if !taken[c] {
					b = c
					break
				}
			}
			taken[b] = true
		}
		out[i] = b + ext
	}
	return out
}

// fitName is name when it fits in limit bytes, else its start and a hash
// of the whole name, limit bytes long. name is ASCII (safeName's).
func fitName(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:limit-hashLen-1] + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

func counts(names []string) map[string]int {
	c := make(map[string]int, len(names))
	for _, n := range names {
		c[n]++
	}
	return c
}

// safeName lowers s and replaces every character outside a-z, 0-9, '.', '-'
// and '_' with '_'; an empty or all-dots result becomes "_".
func safeName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if strings.Trim(string(b), ".") == "" {
		return "_"
	}
	return string(b)
}

// PrintNotes prints the warnings and requirement findings of res on w, one
// line each under its severity (render.Note.Printed): never "error", the
// render succeeded. quiet replaces the findings with one line per category,
// naming the command that lists them (olm-cmp inspect followed by
// inspectArgs); otherwise, unless verbose, the RBAC-only api findings are one
// line (render.FoldRBACOnly).
func PrintNotes(w io.Writer, res *render.Result, quiet, verbose bool, inspectArgs string) {
	type tally struct {
		n, required int
	}
	byCat := map[requirements.Category]*tally{}
	notes := res.Notes()
	if !quiet && !verbose {
		notes = render.FoldRBACOnly(notes, "-v prints each with its fix")
	}
	for _, n := range notes {
		if n.Finding == nil || !quiet {
			fmt.Fprintln(w, echo.Text(n.Printed()))
			continue
		}
		t := byCat[n.Finding.Category]
		if t == nil {
			t = &tally{}
			byCat[n.Finding.Category] = t
		}
		t.n++
		if n.Severity == requirements.Required {
			t.required++
		}
	}
	for _, c := range requirements.Categories {
		t := byCat[c]
		if t == nil {
			continue
		}
		// The line's word is the gravest of its findings'.
		severity, noun, mixed := requirements.Warning, "requirements", ""
		if t.required > 0 {
			severity = requirements.Required
		}
		if t.n == 1 {
			noun = "requirement"
		}
		if t.required > 0 && t.required < t.n {
			mixed = fmt.Sprintf(" (%d required, %d warnings)", t.required, t.n-t.required)
		}
		fmt.Fprintf(w, "%s: %d %s %s not met%s: olm-cmp inspect %s lists them\n",
			severity, t.n, c, noun, mixed, echo.Text(inspectArgs))
	}
}
