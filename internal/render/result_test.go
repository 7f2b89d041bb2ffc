package render

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// WriteYAML writes what YAML returns, byte for byte (output.Write prints
// with one, the plugin with the other), and says when the writer fails.
func TestResultWriteYAMLIsYAML(t *testing.T) {
	res := &Result{Manifests: []string{
		"kind: A\n",
		"kind: B", // no final newline: the stream adds one
		"",
		strings.Repeat("x: y\n", 40000), // larger than the write buffer
	}}
	var w bytes.Buffer
	if err := res.WriteYAML(&w); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Bytes(), res.YAML()) {
		t.Errorf("WriteYAML wrote %d bytes unlike YAML's %d", w.Len(), len(res.YAML()))
	}
	if !strings.HasPrefix(w.String(), "---\nkind: A\n---\nkind: B\n---\n\n---\nx: y\n") {
		t.Errorf("stream starts %q", w.String()[:40])
	}
	full := errors.New("disk full")
	if err := res.WriteYAML(failingWriter{full}); !errors.Is(err, full) {
		t.Errorf("WriteYAML to a failing writer: %v, want %v", err, full)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }
