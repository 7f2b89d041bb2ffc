package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/output"
	"github.com/olm-cmp/olm-cmp/internal/render"
)

// renderOutput is how render writes a result: -o, --output-dir, --quiet.
type renderOutput struct {
	format string
	dir    string
	quiet  bool
	// verbose prints every RBAC-only api finding instead of one line.
	verbose bool
}

func (o *renderOutput) register(fs interface {
	StringVarP(p *string, name, shorthand, value, usage string)
	StringVar(p *string, name, value, usage string)
	BoolVarP(p *bool, name, shorthand string, value bool, usage string)
}) {
	fs.StringVarP(&o.format, "output", "o", output.YAML, "yaml (a multi-document stream) or json (one v1 List object holding every object, the JSON the plugin sends)")
	fs.StringVar(&o.dir, "output-dir", "", "write one file per object into this directory instead of stdout, named <wave>-<kind>-<name>.yaml (or .json with -o json; at most 200 bytes, a longer name cut and ended with a hash); the directory is replaced as a whole, and only if olm-cmp wrote it (or it is empty)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "summarise requirement findings in one line per category (olm-cmp inspect DIR lists them) and leave out the informational lines")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "print each API group only the operator's RBAC rules name on its own line, with its fix (by default one line names them all)")
}

// check refuses a flag value before anything is rendered (a registry pull
// can take minutes): output.WriteDir checks the directory again.
func (o *renderOutput) check() error {
	switch o.format {
	case output.YAML, output.JSON:
	default:
		return fmt.Errorf("--output %s: use yaml or json", echo.Quote(o.format))
	}
	if o.dir != "" {
		return output.Replaceable(filepath.Clean(o.dir))
	}
	return nil
}

// write writes res to stdout, or to --output-dir.
func (o *renderOutput) write(stdout io.Writer, res *render.Result) error {
	return output.Write(stdout, res, o.format, o.dir)
}
