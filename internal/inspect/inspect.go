// Package inspect is the report of `olm-cmp inspect`: a bundle summarised
// (package, version, install modes, CRDs, deployments, webhooks, images),
// the catalog's choice, the trust policy's verdicts and the requirements
// report of the bundle as a spec renders it, as text or JSON. The CLI loads
// the bundle; this package reads it and renders it for the report.
package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Summary is what `olm-cmp inspect` reports; JSON field names are its -o
// json form.
type Summary struct {
	Package        string            `json:"package"`
	CSV            string            `json:"csv"`
	Version        string            `json:"version"`
	Source         string            `json:"source"`
	Digest         string            `json:"digest,omitempty"`
	Channels       string            `json:"channels,omitempty"`
	DefaultChannel string            `json:"defaultChannel,omitempty"`
	Replaces       string            `json:"replaces,omitempty"`
	Skips          []string          `json:"skips,omitempty"`
	SkipRange      string            `json:"skipRange,omitempty"`
	MinKubeVersion string            `json:"minKubeVersion,omitempty"`
	InstallModes   map[string]bool   `json:"installModes"`
	CRDs           []CRD             `json:"crds"`
	Deployments    []Deployment      `json:"deployments"`
	Webhooks       []Webhook         `json:"webhooks,omitempty"`
	RelatedImages  map[string]string `json:"relatedImages,omitempty"`
	Objects        []string          `json:"objects,omitempty"`
	Examples       []string          `json:"examples,omitempty"`
	// Catalog is set when the bundle was chosen from a catalog (--catalog).
	Catalog *Catalog `json:"catalog,omitempty"`
	// Requirements is the requirements report of the bundle as the spec
	// (DIR/olm-cmp.yaml, else a default spec) renders it.
	Requirements []requirements.Finding `json:"requirements"`
	// RequirementsError says why the report could not be made (the
	// render failed).
	RequirementsError string `json:"requirementsError,omitempty"`
	// Signatures are the trust policy's verdicts on the catalog image (with
	// --catalog) and the bundle; absent without a trust policy.
	Signatures []Signature `json:"signatures,omitempty"`
}

// Signature is render.Signature for inspect.
type Signature struct {
	// Role is bundle or catalog.
	Role   string `json:"role"`
	Image  string `json:"image"`
	Digest string `json:"digest,omitempty"`
	// Signer is the olm-cmp.dev/signature annotation's value: the key or
	// identity that verified the image, or unverified.
	Signer   string `json:"signer"`
	Verified bool   `json:"verified"`
	Format   string `json:"format,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Mode     string `json:"mode,omitempty"`
	// Problem says why it is not verified (warn mode, a directory).
	Problem string `json:"problem,omitempty"`
}

// AddSignatures adds the trust policy's verdicts.
func (s *Summary) AddSignatures(sigs []render.Signature) {
	for _, g := range sigs {
		s.Signatures = append(s.Signatures, Signature{
			Role: g.Role, Image: g.Image, Digest: g.Digest, Signer: g.Annotation(), Verified: g.Verified(),
			Format: g.Format, Scope: g.Scope, Mode: string(g.Mode), Problem: g.Problem,
		})
	}
}

// row is a verdict in one line of inspect's text.
func (g Signature) row() string {
	text := g.Signer
	var about []string
	if g.Scope != "" {
		about = append(about, "scope "+g.Scope)
	}
	if g.Mode != "" {
		about = append(about, "mode "+g.Mode)
	}
	if g.Format != "" {
		about = append(about, g.Format)
	}
	if len(about) > 0 {
		text += " (" + strings.Join(about, ", ") + ")"
	}
	if g.Problem != "" {
		text += ": " + g.Problem
	}
	return text
}

// Catalog is catalog.Choice for `inspect --catalog`.
type Catalog struct {
	Ref     string `json:"ref"`
	Image   string `json:"image,omitempty"`
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	Range   string `json:"range,omitempty"`
	Bundle  string `json:"bundle"`
	Version string `json:"version"`
}

// CRD is a CRD of the bundle and the size of its YAML.
type CRD struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// Deployment is a deployment of the CSV's install strategy.
type Deployment struct {
	Name           string   `json:"name"`
	ServiceAccount string   `json:"serviceAccount"`
	Images         []string `json:"images"`
}

// Webhook is a webhook definition of the CSV.
type Webhook struct {
	Type       string `json:"type"`
	Name       string `json:"name"`
	Deployment string `json:"deployment"`
	Port       int32  `json:"port"`
	Path       string `json:"path,omitempty"`
}

// DefaultRequest is the spec a user would start from: the bundle alone,
// installed in the CSV's suggested namespace (else one named after the
// package).
func DefaultRequest(b *bundle.Bundle) render.Request {
	ns := b.CSV.Annotations["operatorframework.io/suggested-namespace"]
	if ns == "" {
		ns = b.Package
	}
	return render.Request{Spec: spec.Spec{Bundle: b.Origin.Ref, Namespace: ns}, Name: b.Package}
}

// AddRequirements renders the bundle (never strictly: the report is the
// point) and keeps its requirements report.
func (s *Summary) AddRequirements(ctx context.Context, rv render.Resolved, b *bundle.Bundle) {
	rv.Request.Spec.Strict = false
	res, err := render.RenderBundle(ctx, rv, b)
	if err != nil {
		s.RequirementsError = err.Error()
		return
	}
	s.Requirements = res.Requirements
	if s.Requirements == nil {
		s.Requirements = []requirements.Finding{}
	}
}

// Summarize is the summary of the bundle b, without requirements or
// signatures.
func Summarize(b *bundle.Bundle) (*Summary, error) {
	csv := b.CSV
	s := &Summary{
		Package:        b.Package,
		CSV:            csv.Name,
		Version:        csv.Spec.Version.String(),
		Source:         b.Origin.Ref,
		Digest:         b.Origin.Digest,
		Channels:       b.Annotations["operators.operatorframework.io.bundle.channels.v1"],
		DefaultChannel: b.Annotations["operators.operatorframework.io.bundle.channel.default.v1"],
		Replaces:       csv.Spec.Replaces,
		Skips:          csv.Spec.Skips,
		SkipRange:      csv.Annotations["olm.skipRange"],
		MinKubeVersion: csv.Spec.MinKubeVersion,
		InstallModes:   map[string]bool{},
		RelatedImages:  map[string]string{},
	}
	if b.Origin.Image != "" {
		s.Source = b.Origin.Image
	}
	for _, m := range csv.Spec.InstallModes {
		s.InstallModes[string(m.Type)] = m.Supported
	}
	for _, c := range b.CRDs {
		text, err := c.String()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.File, err)
		}
		s.CRDs = append(s.CRDs, CRD{Name: c.GetName(), Bytes: len(text)})
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		ds := Deployment{Name: d.Name, ServiceAccount: d.Spec.Template.Spec.ServiceAccountName}
		// Concat, not append: append would write the app containers into the spare
		// capacity of the bundle's InitContainers slice (a loaded bundle is shared).
		for _, c := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
			ds.Images = append(ds.Images, c.Image)
		}
		s.Deployments = append(s.Deployments, ds)
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		path := ""
		if w.WebhookPath != nil {
			path = *w.WebhookPath
		}
		s.Webhooks = append(s.Webhooks, Webhook{Type: string(w.Type), Name: w.GenerateName, Deployment: w.DeploymentName, Port: w.ContainerPort, Path: path})
	}
	for _, r := range csv.Spec.RelatedImages {
		s.RelatedImages[r.Name] = r.Image
	}
	for _, o := range b.Others {
		s.Objects = append(s.Objects, o.GetKind()+"/"+o.GetName())
	}
	var examples []struct {
		Kind string `json:"kind"`
	}
	if ex := csv.Annotations["alm-examples"]; ex != "" && json.Unmarshal([]byte(ex), &examples) == nil {
		for _, e := range examples {
			s.Examples = append(s.Examples, e.Kind)
		}
	}
	return s, nil
}

// WriteText prints the summary as aligned rows, then the requirements.
func (s *Summary) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			printf(w, "%s:\t%s\n", k, v)
		}
	}
	row("Package", s.Package)
	row("CSV", s.CSV)
	row("Version", s.Version)
	row("Source", s.Source)
	row("Digest", s.Digest)
	for _, g := range s.Signatures {
		row("Signature ("+g.Role+")", g.row())
	}
	row("Channels", s.Channels)
	row("Default channel", s.DefaultChannel)
	row("Replaces", s.Replaces)
	row("Skips", strings.Join(s.Skips, ", "))
	row("Skip range", s.SkipRange)
	row("Min Kubernetes", s.MinKubeVersion)
	var modes []string
	for _, m := range []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"} {
		if s.InstallModes[m] {
			modes = append(modes, m)
		}
	}
	row("Install modes", strings.Join(modes, ", "))
	printf(w, "CRDs (%d):\n", len(s.CRDs))
	for _, c := range s.CRDs {
		note := ""
		if c.Bytes > 262144 {
			note = "  (over 256 KiB: rendered with ServerSideApply=true)"
		}
		printf(w, "  %s\t%d bytes%s\n", c.Name, c.Bytes, note)
	}
	printf(w, "Deployments (%d):\n", len(s.Deployments))
	for _, d := range s.Deployments {
		printf(w, "  %s\tserviceAccount=%s\t%s\n", d.Name, d.ServiceAccount, strings.Join(d.Images, ", "))
	}
	if len(s.Webhooks) > 0 {
		printf(w, "Webhooks (%d):\n", len(s.Webhooks))
		for _, h := range s.Webhooks {
			printf(w, "  %s\t%s\tdeployment=%s port=%d %s\n", h.Type, h.Name, h.Deployment, h.Port, h.Path)
		}
	}
	if len(s.RelatedImages) > 0 {
		names := make([]string, 0, len(s.RelatedImages))
		for n := range s.RelatedImages {
			names = append(names, n)
		}
		sort.Strings(names)
		printf(w, "Related images (%d):\n", len(names))
		for _, n := range names {
			printf(w, "  %s\t%s\n", n, s.RelatedImages[n])
		}
	}
	if len(s.Objects) > 0 {
		printf(w, "Other objects (%d):\n", len(s.Objects))
		for _, o := range s.Objects {
			printf(w, "  %s\n", o)
		}
	}
	row("alm-examples", strings.Join(s.Examples, ", "))
	if c := s.Catalog; c != nil {
		row("Catalog", c.Ref)
		if c.Image != c.Ref {
			row("Catalog image", c.Image)
		}
		row("Catalog channel", c.Channel)
		row("Catalog range", c.Range)
		row("Catalog entry", c.Package+" "+c.Version+": "+c.Bundle)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return s.writeRequirements(out)
}

// writeRequirements prints the requirements report, one block per finding.
func (s *Summary) writeRequirements(out io.Writer) error {
	if s.RequirementsError != "" {
		err := printf(out, "Requirements: not computed: %s\n", s.RequirementsError)
		return err
	}
	accepted := len(s.Requirements) - len(requirements.Pending(s.Requirements))
	printf(out, "Requirements (%d, %d accepted):\n", len(s.Requirements), accepted)
	for _, f := range s.Requirements {
		mark := string(f.Severity)
		if f.Accepted {
			mark = "accepted"
		}
		printf(out, "  %-8s %s\n           from %s\n           %s\n           fix: %s\n", mark, f.Key(), f.Source, f.Message, f.Fix)
	}
	return nil
}

// printf writes to w with every string argument escaped (echo.Text): the
// summary's names, versions and images come from the bundle, whose text may
// hold terminal escapes, as errors and `versions` already treat it.
func printf(w io.Writer, format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = echo.Text(s)
		}
	}
	_, err := fmt.Fprintf(w, format, args...)
	return err
}

// CatalogOf is the summary of a catalog's choice.
func CatalogOf(c *catalog.Choice) *Catalog {
	return &Catalog{Ref: c.Ref, Image: c.Image, Package: c.Package, Channel: c.Channel, Range: c.Range, Bundle: c.Bundle, Version: c.Version}
}
