package bundle

import (
	"cmp"
	"fmt"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// checkCSVVersion refuses a CSV whose spec.version is not a semantic
// version as written. OLM's own type reads it leniently ("1.0" becomes
// 1.0.0, "v1.2.3" 1.2.3), so a version that upgrade edges, catalogs and
// olm-cmp's messages then print differently from the file goes unnoticed;
// and where lenient reading fails, its message ("Invalid character(s) found
// in major number \"0abc\"") names neither the file nor the field. Every
// bundle of the reference corpus writes a strict version.
func checkCSVVersion(file string, csv *yaml.Node) error {
	v := field(field(csv, "spec"), "version")
	if v == nil || isNull(v) {
		return nil
	}
	if v.Kind != yaml.ScalarNode {
		got := map[yaml.Kind]string{yaml.SequenceNode: "a list", yaml.MappingNode: "a map"}[v.Kind]
		return fmt.Errorf("%s: spec.version: expected a version such as 1.2.3, got %s", file, cmp.Or(got, "an alias"))
	}
	if _, err := semver.Parse(v.Value); err != nil {
		return fmt.Errorf("%s: spec.version %q is not a semantic version: write MAJOR.MINOR.PATCH, optionally with -prerelease or +build, e.g. 1.0.0 or 1.0.0-rc.1", file, v.Value)
	}
	return nil
}
