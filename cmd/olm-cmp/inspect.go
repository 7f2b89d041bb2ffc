package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// summary is what `inspect` reports; JSON field names are its -o json form.
type summary struct {
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
	CRDs           []crdSummary      `json:"crds"`
	Deployments    []deploySummary   `json:"deployments"`
	Webhooks       []webhookSummary  `json:"webhooks,omitempty"`
	RelatedImages  map[string]string `json:"relatedImages,omitempty"`
	Objects        []string          `json:"objects,omitempty"`
	Examples       []string          `json:"examples,omitempty"`
	// Catalog is set when the bundle was chosen from a catalog (--catalog).
	Catalog *catalogSummary `json:"catalog,omitempty"`
	// Requirements is the requirements report of the bundle as the spec
	// (DIR/olm-cmp.yaml, else a default spec) renders it.
	Requirements []requirements.Finding `json:"requirements"`
	// RequirementsError says why the report could not be made (the
	// render failed).
	RequirementsError string `json:"requirementsError,omitempty"`
	// Signatures are the trust policy's verdicts on the catalog image (with
	// --catalog) and the bundle; absent without a trust policy.
	Signatures []signatureSummary `json:"signatures,omitempty"`
}

// signatureSummary is render.Signature for inspect.
type signatureSummary struct {
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

func (s *summary) addSignatures(sigs []render.Signature) {
	for _, g := range sigs {
		s.Signatures = append(s.Signatures, signatureSummary{
			Role: g.Role, Image: g.Image, Digest: g.Digest, Signer: g.Annotation(), Verified: g.Verified(),
			Format: g.Format, Scope: g.Scope, Mode: string(g.Mode), Problem: g.Problem,
		})
	}
}

// row is a verdict in one line of inspect's text.
func (g signatureSummary) row() string {
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

// catalogSummary is catalog.Choice for `inspect --catalog`.
type catalogSummary struct {
	Ref     string `json:"ref"`
	Image   string `json:"image,omitempty"`
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	Range   string `json:"range,omitempty"`
	Bundle  string `json:"bundle"`
	Version string `json:"version"`
}

type crdSummary struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

type deploySummary struct {
	Name           string   `json:"name"`
	ServiceAccount string   `json:"serviceAccount"`
	Images         []string `json:"images"`
}

type webhookSummary struct {
	Type       string `json:"type"`
	Name       string `json:"name"`
	Deployment string `json:"deployment"`
	Port       int32  `json:"port"`
	Path       string `json:"path,omitempty"`
}

func newInspectCmd() *cobra.Command {
	var (
		rf                              registryFlags
		output                          string
		catalog, pkg, channel, versions string
		bundleRef                       string
		strict                          bool
	)
	cmd := &cobra.Command{
		Use:   "inspect REF|DIR [--bundle REF|DIR] | --catalog CATALOG --package P",
		Short: "Summarise a bundle: package, version, install modes, CRDs, deployments, webhooks, images",
		Long: `Inspect summarises the bundle image or directory REF. With --catalog (a
catalog image or ./directory) and --package instead, it first shows which
bundle the catalog chooses for --channel and --version (a range), as a spec
naming that catalog would render.

Requirements lists what the operator needs from a cluster without OLM or
OpenShift (docs/requirements.md): for a source directory holding olm-cmp.yaml,
as its spec renders it; otherwise as a default spec would. --bundle replaces
the bundle a source directory's spec names (as render's --bundle does: an
image, or a directory relative to the working directory), so an example
whose spec names an image can be inspected from a local copy of its bundle;
alone, it names the bundle to inspect. --strict exits non-zero when a
finding is not accepted.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case catalog != "":
				return cobra.NoArgs(cmd, args)
			case cmd.Flags().Changed("bundle"):
				return cobra.MaximumNArgs(1)(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			var b *bundle.Bundle
			var cat *catalogSummary
			var rv *render.Resolved
			switch {
			case catalog != "":
				rv, b, cat, err = loadFromCatalog(cmd.Context(), r, catalog, pkg, channel, versions)
			case pkg != "" || channel != "" || versions != "":
				return fmt.Errorf("--package, --channel and --version need --catalog")
			case len(args) == 0:
				rv, b, err = loadAny(cmd.Context(), r, bundleRef)
			case hasSpecFile(args[0]) || namesSpec(args[0]):
				var sf *specFlags
				if cmd.Flags().Changed("bundle") {
					sf = &specFlags{bundle: bundleRef}
				}
				rv, b, err = loadSpecDir(cmd, r, args[0], sf)
			case cmd.Flags().Changed("bundle"):
				return fmt.Errorf("--bundle replaces the bundle of a source directory's %s, and %s has none: inspect the bundle itself (olm-cmp inspect %s)", spec.FileName, args[0], bundleRef)
			default:
				rv, b, err = loadAny(cmd.Context(), r, args[0])
			}
			if err != nil {
				return err
			}
			s, err := summarize(b)
			if err != nil {
				return err
			}
			s.Catalog = cat
			if rv == nil || rv.Request.Spec.Namespace == "" {
				// No spec: the bundle alone, as a default spec renders it.
				var sigs []render.Signature
				if rv != nil {
					sigs = rv.Signatures
				}
				rv = &render.Resolved{Request: defaultRequest(b), Origin: b.Origin, Signatures: sigs}
			}
			s.addSignatures(rv.Signatures)
			s.addRequirements(cmd.Context(), *rv, b)
			if err := s.write(cmd.OutOrStdout(), output); err != nil {
				return err
			}
			if pending := requirements.Pending(s.Requirements); strict && len(pending) > 0 {
				where := "listed above"
				if output == "json" {
					where = `the "requirements" entries of the JSON output with "accepted": false`
				}
				return fmt.Errorf("strict: %d requirement(s) not met (%s)", len(pending), where)
			}
			if strict && s.RequirementsError != "" {
				return fmt.Errorf("strict: no requirements report: %s", s.RequirementsError)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit non-zero when a requirements finding is not accepted")
	cmd.Flags().StringVar(&catalog, "catalog", "", "file-based catalog image or ./directory to choose the bundle from")
	cmd.Flags().StringVar(&pkg, "package", "", "package to choose from --catalog")
	cmd.Flags().StringVar(&channel, "channel", "", "channel(s) of --package, comma-separated; default every channel")
	cmd.Flags().StringVar(&versions, "version", "", "version range for --package (1.2.x, \">=1.0.0 <2\"); default the newest")
	cmd.Flags().StringVar(&bundleRef, "bundle", "", "bundle image reference, or a directory relative to the working directory, replacing the one DIR/olm-cmp.yaml names (as render --bundle does)")
	rf.register(cmd.Flags())
	return cmd
}

// write prints the summary as text or JSON.
func (s *summary) write(out io.Writer, output string) error {
	switch output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case "text", "":
		return s.writeText(out)
	}
	return fmt.Errorf("--output %q: use text or json", output)
}

// hasSpecFile reports whether dir is a source directory (holds olm-cmp.yaml).
func hasSpecFile(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, spec.FileName))
	return err == nil && fi.Mode().IsRegular()
}

// namesSpec reports whether arg is a spec file (DIR/olm-cmp.yaml, as
// render takes it) or names one render would refuse with its fix (an
// olm-cmp.yml, or a directory holding one and no bundle): not a bundle.
func namesSpec(arg string) bool {
	regular := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	switch filepath.Base(arg) {
	case spec.FileName, "olm-cmp.yml":
		return regular(arg)
	}
	_, err := os.Stat(filepath.Join(arg, "metadata"))
	return regular(filepath.Join(arg, "olm-cmp.yml")) && err != nil
}

// loadSpecDir resolves and loads the bundle DIR/olm-cmp.yaml names, as
// render would.
// Only the flags sf holds that were given apply (nil: none).
func loadSpecDir(cmd *cobra.Command, r *render.Renderer, dir string, sf *specFlags) (*render.Resolved, *bundle.Bundle, error) {
	req, err := loadRequest(cmd, dir, sf)
	if err != nil {
		return nil, nil, err
	}
	rv, err := r.Resolve(cmd.Context(), req)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.Load(cmd.Context(), rv)
	if err != nil {
		return nil, nil, err
	}
	return &rv, b, nil
}

// defaultRequest is the spec a user would start from: the bundle alone,
// installed in the CSV's suggested namespace (else one named after the
// package).
func defaultRequest(b *bundle.Bundle) render.Request {
	ns := b.CSV.Annotations["operatorframework.io/suggested-namespace"]
	if ns == "" {
		ns = b.Package
	}
	return render.Request{Spec: spec.Spec{Bundle: b.Origin.Ref, Namespace: ns}, Name: b.Package}
}

// addRequirements renders the bundle (never strictly: the report is the
// point) and keeps its requirements report.
func (s *summary) addRequirements(ctx context.Context, rv render.Resolved, b *bundle.Bundle) {
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

// loadFromCatalog loads the bundle a spec naming this catalog would render,
// through the same Resolve and Load; a ./directory is relative to the
// working directory.
func loadFromCatalog(ctx context.Context, r *render.Renderer, ref, pkg, channel, versions string) (*render.Resolved, *bundle.Bundle, *catalogSummary, error) {
	ref, err := catalogArg(ref)
	if err != nil {
		return nil, nil, nil, err
	}
	// Resolve validates the catalog fields as a spec's; the namespace it
	// also requires plays no part in choosing.
	rv, err := r.Resolve(ctx, render.Request{Spec: spec.Spec{Catalog: ref, Package: pkg, Channel: channel, Version: versions, Namespace: "inspect"}})
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := r.Load(ctx, rv)
	if err != nil {
		return nil, nil, nil, err
	}
	c := rv.Catalog
	// The bundle alone is reported as a default spec renders it (with the
	// signatures this Resolve checked).
	only := &render.Resolved{Signatures: rv.Signatures}
	return only, b, &catalogSummary{Ref: c.Ref, Image: c.Image, Package: c.Package, Channel: c.Channel, Range: c.Range, Bundle: c.Bundle, Version: c.Version}, nil
}

// loadAny loads a directory (an explicit path, or one that exists) or an
// image, verified against the trust policy in between. The Resolved it
// returns holds only the signatures (nil without a policy).
func loadAny(ctx context.Context, r *render.Renderer, ref string) (*render.Resolved, *bundle.Bundle, error) {
	if err := checkRefArg("", ref); err != nil {
		return nil, nil, err
	}
	if render.IsLocalDir(ref) {
		abs, err := filepath.Abs(ref)
		if err != nil {
			return nil, nil, err
		}
		b, err := bundle.LoadDir(abs)
		if err != nil {
			return nil, nil, err
		}
		sigs, err := r.VerifyOrigin(ctx, b.Origin, ref)
		return &render.Resolved{Signatures: sigs}, b, err
	}
	o, err := r.Loader.Resolve(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	sigs, err := r.VerifyOrigin(ctx, o, ref)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.Loader.Load(ctx, o)
	return &render.Resolved{Signatures: sigs}, b, err
}

func summarize(b *bundle.Bundle) (*summary, error) {
	csv := b.CSV
	s := &summary{
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
		s.CRDs = append(s.CRDs, crdSummary{Name: c.GetName(), Bytes: len(text)})
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		ds := deploySummary{Name: d.Name, ServiceAccount: d.Spec.Template.Spec.ServiceAccountName}
		for _, c := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
			ds.Images = append(ds.Images, c.Image)
		}
		s.Deployments = append(s.Deployments, ds)
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		path := ""
		if w.WebhookPath != nil {
			path = *w.WebhookPath
		}
		s.Webhooks = append(s.Webhooks, webhookSummary{Type: string(w.Type), Name: w.GenerateName, Deployment: w.DeploymentName, Port: w.ContainerPort, Path: path})
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

func (s *summary) writeText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%s:\t%s\n", k, v)
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
	fmt.Fprintf(w, "CRDs (%d):\n", len(s.CRDs))
	for _, c := range s.CRDs {
		note := ""
		if c.Bytes > 262144 {
			note = "  (over 256 KiB: rendered with ServerSideApply=true)"
		}
		fmt.Fprintf(w, "  %s\t%d bytes%s\n", c.Name, c.Bytes, note)
	}
	fmt.Fprintf(w, "Deployments (%d):\n", len(s.Deployments))
	for _, d := range s.Deployments {
		fmt.Fprintf(w, "  %s\tserviceAccount=%s\t%s\n", d.Name, d.ServiceAccount, strings.Join(d.Images, ", "))
	}
	if len(s.Webhooks) > 0 {
		fmt.Fprintf(w, "Webhooks (%d):\n", len(s.Webhooks))
		for _, h := range s.Webhooks {
			fmt.Fprintf(w, "  %s\t%s\tdeployment=%s port=%d %s\n", h.Type, h.Name, h.Deployment, h.Port, h.Path)
		}
	}
	if len(s.RelatedImages) > 0 {
		names := make([]string, 0, len(s.RelatedImages))
		for n := range s.RelatedImages {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(w, "Related images (%d):\n", len(names))
		for _, n := range names {
			fmt.Fprintf(w, "  %s\t%s\n", n, s.RelatedImages[n])
		}
	}
	if len(s.Objects) > 0 {
		fmt.Fprintf(w, "Other objects (%d):\n", len(s.Objects))
		for _, o := range s.Objects {
			fmt.Fprintf(w, "  %s\n", o)
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
func (s *summary) writeRequirements(out io.Writer) error {
	if s.RequirementsError != "" {
		_, err := fmt.Fprintf(out, "Requirements: not computed: %s\n", s.RequirementsError)
		return err
	}
	accepted := len(s.Requirements) - len(requirements.Pending(s.Requirements))
	fmt.Fprintf(out, "Requirements (%d, %d accepted):\n", len(s.Requirements), accepted)
	for _, f := range s.Requirements {
		mark := string(f.Severity)
		if f.Accepted {
			mark = "accepted"
		}
		fmt.Fprintf(out, "  %-8s %s\n           from %s\n           %s\n           fix: %s\n", mark, f.Key(), f.Source, f.Message, f.Fix)
	}
	return nil
}
