package render

import (
	"context"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// A file name is the repository author's: a line break in it would end the
// error line CI prints (and forge the next one), an escape sequence act on
// the terminal. Names are escaped wherever a message repeats them.
func TestExtraManifestNamesEscaped(t *testing.T) {
	bad := "x\x1b[2J\nerror: forged.yaml"
	for _, c := range []struct {
		name string
		em   *spec.ExtraManifests
		warn bool
	}{
		{name: "file does not parse"},
		{name: "named in a warning", em: &spec.ExtraManifests{Include: []string{"nothing.yaml"}}, warn: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := demoRequest(t)
			req.SourceDir = extraDir(t, map[string]string{bad: "not: [valid"})
			req.Spec.ExtraManifests = c.em
			res, err := (&Renderer{}).Render(context.Background(), req)
			var msgs []string
			if c.warn {
				if err != nil {
					t.Fatal(err)
				}
				msgs = res.Warnings
			} else {
				if err == nil {
					t.Fatal("rendered a file that does not parse")
				}
				msgs = []string{err.Error()}
			}
			found := false
			for _, m := range msgs {
				if strings.Contains(m, `x\x1b[2J\nerror: forged.yaml`) {
					found = true
				}
				if strings.ContainsAny(m, "\n\x1b") {
					t.Errorf("message holds the file name's raw line break or escape: %q", m)
				}
			}
			if !found {
				t.Errorf("no message names the file, escaped: %q", msgs)
			}
		})
	}
}
