package render

import (
	"errors"
	"fmt"
	"os"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// RequestOptions are what a command line adds to a source directory's spec
// (LoadRequest).
type RequestOptions struct {
	// APIVersions are the cluster's group/versions (KUBE_API_VERSIONS).
	APIVersions []string
	// Override applies the command line's spec flags to a spec and returns
	// the notes of what they replaced; nil: no flags. It is applied to a
	// file that does not validate too, so every problem is judged on the
	// spec the flags make.
	Override func(*spec.Spec) (notes []string, err error)
	// WithoutFile: the flags name a bundle or catalog, so the directory
	// needs no olm-cmp.yaml (and has no extra manifests then).
	WithoutFile bool
	// Explain rewords the spec's validation error (noFile: the spec is
	// the flags' alone), say to name the flag that gave a value; nil: as
	// it is.
	Explain func(noFile bool, err error) error
}

// LoadRequest reads dir/olm-cmp.yaml into a request, the command line's
// overrides applied, validated where the file's lines and the flags are
// known (so that a bad value names its line or its flag; the render checks
// the same again). notes are Override's, for warning lines.
func LoadRequest(dir string, o RequestOptions) (req Request, notes []string, err error) {
	req = Request{SourceDir: dir, APIVersions: o.APIVersions}
	file, err := spec.Load(dir)
	var fileErr *spec.FileError
	switch {
	case err == nil:
		req.Spec, req.Name = file.Spec, file.Metadata.Name
	case errors.As(err, &fileErr) && o.Override != nil:
		// Every problem at once, judged on the spec the flags make: a flag
		// may supply or replace what the file gets wrong.
		if _, err := o.Override(&fileErr.File.Spec); err != nil {
			return req, nil, err
		}
		fileErr.Revalidate(&fileErr.File.Spec)
		return req, nil, fileErr
	case errors.Is(err, os.ErrNotExist) && o.Override != nil && o.WithoutFile:
		// No spec file: no extra manifests either, and a ./bundle or
		// ./catalog path is relative to the working directory.
		req.SourceDir = ""
	case errors.Is(err, os.ErrNotExist) && bundle.LooksLike(dir):
		return req, nil, fmt.Errorf("%s not found in %s: it is a bundle directory (it has metadata/annotations.yaml), not a source directory: write a spec for it with olm-cmp init %s -d DIR, or render it alone with olm-cmp render --bundle %s -n NAMESPACE",
			spec.FileName, dir, dir, dir)
	default:
		return req, nil, err
	}
	if o.Override != nil {
		if notes, err = o.Override(&req.Spec); err != nil {
			return req, nil, err
		}
	}
	if err := file.Validate(&req.Spec); err != nil {
		if o.Explain != nil {
			err = o.Explain(file == nil, err)
		}
		return req, notes, err
	}
	return req, notes, nil
}

// LocateWarnings names the file and line of the spec entry each of res's
// warnings is about (an exclude selector, an images prefix or an accept
// entry that matched nothing), as the same entry's error under strict
// does (Locate). A requirement finding is about the bundle, not a line:
// its text is kept, so that Notes still finds it.
func (r Request) LocateWarnings(res *Result) {
	findings := map[string]bool{}
	for _, f := range res.Requirements {
		findings[f.Line()] = true
	}
	var f *spec.File
	for i, w := range res.Warnings {
		if findings[w] || r.SourceDir == "" {
			continue
		}
		if f == nil {
			var err error
			if f, err = spec.Load(r.SourceDir); err != nil {
				return
			}
		}
		res.Warnings[i] = f.Locate(errors.New(w), &r.Spec).Error()
	}
}
