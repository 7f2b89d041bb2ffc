package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/output"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// specFlags are the spec fields the CLI can override; a flag given on the
// command line replaces the file's value (lists are replaced, not appended).
type specFlags struct {
	bundle, version, namespace, certProvider string
	catalog, pkg, channel                    string
	watchNamespaces, pullSecrets, excludes   []string
	strict                                   bool
}

func (f *specFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.bundle, "bundle", "", "bundle image reference, or a directory relative to the working directory, which clears spec.version (overrides spec.bundle; on a catalog spec, replaces catalog, package, channel and range; drops a spec.digest pin, with a warning)")
	fs.StringVar(&f.catalog, "catalog", "", "file-based catalog image reference or ./directory (relative to the working directory) to pick the bundle from (overrides spec.catalog)")
	fs.StringVar(&f.pkg, "package", "", "OLM package to install from the catalog (overrides spec.package)")
	fs.StringVar(&f.channel, "channel", "", "catalog channel(s), comma-separated; default every channel (overrides spec.channel)")
	fs.StringVar(&f.version, "version", "", "bundle image tag, or with a catalog a version range such as 1.2.x or \">=1.0.0 <2\" (overrides spec.version; another version than the file's drops its spec.digest pin, with a warning)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "install namespace (overrides spec.namespace; a watched namespace equal to the old one moves too, with a warning, unless --watch-namespace is given)")
	fs.StringArrayVar(&f.watchNamespaces, "watch-namespace", nil, "watched namespace, repeatable; \"\" for all (overrides spec.watchNamespaces)")
	fs.StringArrayVar(&f.pullSecrets, "image-pull-secret", nil, "pull secret name, repeatable (overrides spec.imagePullSecrets)")
	fs.StringArrayVar(&f.excludes, "exclude", nil, "[group/]Kind[/name] to drop, repeatable (overrides spec.exclude)")
	fs.StringVar(&f.certProvider, "certificate-provider", "", "cert-manager, service-ca or none (overrides spec.certificateProvider)")
	fs.BoolVar(&f.strict, "strict", false, "fail on every requirements finding not accepted and every spec entry that matches nothing (overrides spec.strict)")
}

// apply sets the spec fields of the flags given (render.Overrides.Apply:
// its notes say what a flag replaced besides its own field).
func (f *specFlags) apply(fs *pflag.FlagSet, s *spec.Spec) (notes []string, err error) {
	return render.Overrides{
		Bundle: given(fs, "bundle", &f.bundle), Catalog: given(fs, "catalog", &f.catalog),
		Package: given(fs, "package", &f.pkg), Channel: given(fs, "channel", &f.channel),
		Version: given(fs, "version", &f.version), Namespace: given(fs, "namespace", &f.namespace),
		CertificateProvider: given(fs, "certificate-provider", &f.certProvider),
		WatchNamespaces:     given(fs, "watch-namespace", &f.watchNamespaces),
		ImagePullSecrets:    given(fs, "image-pull-secret", &f.pullSecrets),
		Exclude:             given(fs, "exclude", &f.excludes),
		Strict:              given(fs, "strict", &f.strict),
	}.Apply(s)
}

// given is v when flag name was given on the command line, else nil.
func given[T any](fs *pflag.FlagSet, name string, v *T) *T {
	if fs.Changed(name) {
		return v
	}
	return nil
}

// anyChanged reports whether a spec flag was given on the command line.
func (f *specFlags) anyChanged(fs *pflag.FlagSet) bool {
	probe := pflag.NewFlagSet("spec", pflag.ContinueOnError)
	(&specFlags{}).register(probe)
	changed := false
	probe.VisitAll(func(p *pflag.Flag) { changed = changed || fs.Changed(p.Name) })
	return changed
}

// loadRequest reads DIR/olm-cmp.yaml (DIR as the command line gave it: see render.SourceDirArg) and
// applies the flags (none when f is nil). Without a spec file, --bundle (or --catalog and
// --package) and --namespace alone are enough (no extra manifests then).
func loadRequest(cmd *cobra.Command, arg string, f *specFlags) (render.Request, error) {
	dir, err := render.SourceDirArg(arg)
	if err != nil {
		return render.Request{}, err
	}
	fs := cmd.Flags()
	o := render.RequestOptions{
		APIVersions: envAPIVersions(),
		Explain:     func(noFile bool, err error) error { return nameFlags(fs, noFile, err) },
	}
	if f != nil {
		o.Override = func(s *spec.Spec) ([]string, error) { return f.apply(fs, s) }
		o.WithoutFile = fs.Changed("bundle") || fs.Changed("catalog")
	}
	req, notes, err := render.LoadRequest(dir, o)
	printWarnings(cmd.ErrOrStderr(), notes)
	return req, err
}

// flagFields are the spec fields each spec flag replaces (-n moves a
// watched namespace too).
var flagFields = map[string][]string{
	"bundle": {"spec.bundle"}, "catalog": {"spec.catalog"}, "package": {"spec.package"},
	"channel": {"spec.channel"}, "version": {"spec.version"},
	"namespace":       {"spec.namespace", "spec.watchNamespaces"},
	"watch-namespace": {"spec.watchNamespaces"}, "image-pull-secret": {"spec.imagePullSecrets"},
	"exclude": {"spec.exclude"}, "certificate-provider": {"spec.certificateProvider"},
}

// nameFlags leads each line of err, the spec's validation, that is about a
// value a flag gave with that flag: the file does not hold the value, so
// no line of it can be named. Without a spec file, the missing namespace
// names -n.
func nameFlags(fs *pflag.FlagSet, noFile bool, err error) error {
	lines := strings.Split(err.Error(), "\n")
	changed := false
	for i, l := range lines {
		if noFile && strings.HasPrefix(l, "spec.namespace is required") {
			lines[i], changed = l+"; without an olm-cmp.yaml, give it with -n NS", true
			continue
		}
		for flag, fields := range flagFields {
			if !fs.Changed(flag) || !slices.ContainsFunc(fields, func(f string) bool {
				return strings.HasPrefix(l, f+" ") || strings.HasPrefix(l, f+"[") || strings.HasPrefix(l, f+":")
			}) || !slices.ContainsFunc(flagValues(fs, flag), func(v string) bool { return strings.Contains(l, echo.Quote(v)) }) {
				continue
			}
			lines[i], changed = "--"+flag+": "+l, true
			break
		}
	}
	if !changed {
		return err
	}
	return errors.New(strings.Join(lines, "\n"))
}

// flagValues are the values given to flag, one or several.
func flagValues(fs *pflag.FlagSet, flag string) []string {
	v := fs.Lookup(flag).Value
	if s, ok := v.(pflag.SliceValue); ok {
		return s.GetSlice()
	}
	return []string{v.String()}
}

func newRenderCmd() *cobra.Command {
	var (
		sf  specFlags
		rf  registryFlags
		cf  clusterFlags
		out renderOutput
	)
	cmd := &cobra.Command{
		Use:   "render [DIR | DIR/olm-cmp.yaml]",
		Short: "Render DIR/olm-cmp.yaml (default .) to a YAML stream on stdout",
		Long: `Render reads DIR/olm-cmp.yaml, loads the bundle it names, converts it as OLM
would, applies the spec's patches and sync waves, and writes the manifests to
stdout in apply order (-o json: one v1 List object; --output-dir: one file
per object). Each spec flag below replaces its field of the spec
(lists are replaced, not appended); the other fields come from the file only.
On error nothing is written to stdout (nor to --output-dir) and the exit code
is non-zero; every problem of olm-cmp.yaml is reported at once, one per line.

Warnings and requirement findings go to stderr, each line led by its
severity as inspect shows it: error (the operator cannot work as rendered;
spec.strict fails on it) or warning (it may not). --quiet prints one line
per finding category instead; olm-cmp inspect DIR lists the findings.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			req, err := loadRequest(cmd, firstArg(args), &sf)
			if err != nil {
				return err
			}
			if err := cf.apply(&req); err != nil {
				return err
			}
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			r.YAMLOnly = out.format == output.YAML && out.dir == "" // nothing else reads Result.JSON
			res, err := r.Render(cmd.Context(), req)
			if err != nil {
				return req.Locate(err)
			}
			if err := out.write(cmd.OutOrStdout(), res); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			req.LocateWarnings(res)
			output.PrintNotes(stderr, res, out.quiet, out.verbose, inspectArgs(req, firstArg(args)))
			if out.quiet {
				return nil
			}
			if res.Catalog != nil {
				fmt.Fprintf(stderr, "chose %s\n", res.Catalog)
			}
			if res.Origin.Image != "" {
				// Tags move: say which content was rendered.
				fmt.Fprintf(stderr, "rendered %s from %s\n", res.CSVName, res.Origin.Image)
			}
			if out.dir != "" {
				fmt.Fprintf(stderr, "wrote %d objects to %s\n", len(res.Manifests), out.dir)
			}
			return nil
		},
	}
	sf.register(cmd.Flags())
	rf.register(cmd.Flags())
	rf.registerTenancy(cmd.Flags(), true)
	cf.register(cmd.Flags())
	out.register(cmd.Flags())
	return cmd
}

// printWarnings prints one line per warning, its control characters (from
// bundle content: an ESC sequence, a newline) escaped.
func printWarnings(w io.Writer, warnings []string) {
	for _, msg := range warnings {
		fmt.Fprintln(w, "warning:", echo.Text(msg))
	}
}

// inspectArgs are the arguments of the inspect command that lists the
// findings of a render of arg: arg itself, or without a spec file (--bundle,
// --catalog alone) what the flags named.
func inspectArgs(req render.Request, arg string) string {
	switch {
	case req.SourceDir != "" && arg != "":
		return arg
	case req.SourceDir != "":
		return "."
	case req.Spec.Catalog != "":
		return "--catalog " + req.Spec.Catalog + " --package " + req.Spec.Package
	}
	return req.Spec.Bundle
}

// firstArg is the command's optional argument, "" when absent.
func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
