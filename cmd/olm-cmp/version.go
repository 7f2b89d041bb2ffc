package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// commit and date may be stamped with -ldflags "-X main.commit=… -X
// main.date=…"; without them they come from the build info Go records
// (vcs.revision, vcs.time) when built from a Git checkout.
var commit, date string

// keyModules are the modules whose versions decide what olm-cmp renders and
// accepts: OLM's API types, the Kubernetes libraries, the registry client,
// kustomize and signature verification. A module olm-cmp-check alone links
// (sigstore-go) has the version of the olm-cmp-check olm-cmp runs.
var keyModules = []string{
	"github.com/operator-framework/api",
	"k8s.io/apimachinery",
	"k8s.io/apiextensions-apiserver",
	"github.com/google/go-containerregistry",
	"sigs.k8s.io/kustomize/api",
	"github.com/sigstore/sigstore-go",
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the olm-cmp version, commit, build date, Go version and key module versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			helper, _ := checkproc.HelperBuildInfo()
			return writeVersion(cmd.OutOrStdout(), bi, helper)
		},
	}
}

// writeVersion prints what a bug report needs: version, commit (and whether
// the tree was modified), date, Go version and platform, and the key
// modules (from helper's build info, olm-cmp-check's, for those olm-cmp
// does not link). Anything unknown says so.
func writeVersion(w io.Writer, bi, helper *debug.BuildInfo) error {
	rev, at, modified := commit, date, ""
	deps := map[string]string{}
	goVersion := runtime.Version()
	if bi != nil {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.time":
				if at == "" {
					at = s.Value
				}
			case "vcs.modified":
				if s.Value == "true" {
					modified = " (modified)"
				}
			}
		}
	}
	for _, b := range []*debug.BuildInfo{helper, bi} {
		if b == nil {
			continue
		}
		for _, d := range b.Deps {
			v := d.Version
			if d.Replace != nil { // the module built, under the path imported
				v = d.Replace.Version
			}
			deps[d.Path] = v
		}
	}
	if rev == "" {
		rev, modified = "unknown", ""
	}
	if at == "" {
		at = "unknown"
	}
	_, err := fmt.Fprintf(w, "olm-cmp %s\n  commit  %s%s\n  date    %s\n  go      %s %s/%s\n", version, rev, modified, at, goVersion, runtime.GOOS, runtime.GOARCH)
	for _, m := range keyModules {
		v := deps[m]
		if v == "" {
			v = "unknown"
		}
		if err == nil {
			_, err = fmt.Fprintf(w, "  %-40s %s\n", m, v)
		}
	}
	return err
}
