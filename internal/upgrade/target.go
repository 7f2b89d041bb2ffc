package upgrade

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// target is one application directory: its olm-cmp.yaml, the Argo CD
// application that passes it a version (nil when the file holds it), and
// the spec the plugin renders (the file with that application's version,
// digest and upgradeFrom put in, as Argo CD sends them).
type target struct {
	dir      string
	specFile string
	data     []byte // olm-cmp.yaml as read
	file     *spec.File
	app      *App
	spec     spec.Spec
}

// where says where the version lives, for the report.
func (t *target) where() string {
	if t.app != nil && t.app.Version != nil && t.app.Version.Value() != "" {
		return fmt.Sprintf("%s, %s", t.app, t.app.Version.Where)
	}
	return t.specFile
}

// versionInApp reports whether the application's version slot is what the
// plugin renders: a parameter or element with a value (an empty one means
// "not set": docs/plugin.md).
func (t *target) versionInApp() bool {
	return t.app != nil && t.app.Version != nil && t.app.Version.Value() != ""
}

// loadTarget reads dir's spec and finds the application passing it a
// version. Several applications rendering one directory, one of which
// passes its own version, is refused: one directory, one version to write.
func loadTarget(ix *Index, dir string, data []byte) (*target, error) {
	t := &target{dir: dir, specFile: filepath.Join(dir, spec.FileName), data: data}
	f, err := spec.Parse(t.specFile, data)
	if err != nil {
		return nil, err
	}
	t.file, t.spec = f, f.Spec
	if ix == nil {
		return t, nil
	}
	apps, err := ix.Of(dir)
	if err != nil {
		return nil, err
	}
	var passing []*App
	for _, a := range apps {
		if a.Version != nil || a.Digest != nil || a.UpgradeFr != nil {
			passing = append(passing, a)
		}
	}
	if len(passing) > 0 && len(apps) > 1 {
		names := make([]string, len(apps))
		for i, a := range apps {
			names[i] = a.String()
		}
		return nil, fmt.Errorf("%s is rendered by %d Argo CD applications (%s), and %s passes its own version, digest or upgradeFrom: upgrade cannot write one version for all of them; give each application its own directory (one olm-cmp.yaml each), or name the manifests in use with --apps-from",
			dir, len(apps), strings.Join(names, "; "), passing[0].What)
	}
	if len(passing) == 1 || len(apps) == 1 {
		if len(passing) == 1 {
			t.app = passing[0]
		} else {
			t.app = apps[0]
		}
		if t.spec, err = overrides(t.spec, t.app); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// imageParts splits an image reference as spelled into its repository,
// tag and digest (each "" when absent), as render reads spec.bundle.
func imageParts(ref string) (repo, tag, digest string, err error) {
	if _, err := name.ParseReference(ref, name.WithDefaultTag("")); err != nil {
		return "", "", "", err
	}
	repo, digest, _ = strings.Cut(ref, "@")
	if t, err := name.NewTag(repo, name.WithDefaultTag("")); err == nil && t.TagStr() != "" {
		repo, tag = strings.TrimSuffix(repo, ":"+t.TagStr()), t.TagStr()
	}
	return repo, tag, digest, nil
}

// imageTag is the tag an image spec renders: spec.bundle's, else
// spec.version.
func imageTag(s spec.Spec) (repo, tag, digest string, err error) {
	repo, tag, digest, err = imageParts(s.Bundle)
	if err == nil && tag == "" {
		tag = s.Version
	}
	return repo, tag, digest, err
}

// overrides is s as the plugin renders it for the application: its plugin
// env and parameters applied by the plugin's own rules (cmpserver.ParseEnv,
// spec.ApplyOverrides; docs/plugin.md).
func overrides(s spec.Spec, a *App) (spec.Spec, error) {
	var vars []string
	for _, e := range a.Env {
		vars = append(vars, cmpserver.EnvPluginPrefix+e[0]+"="+e[1])
	}
	if len(a.Params) > 0 {
		js, err := json.Marshal(a.Params)
		if err != nil {
			return s, err
		}
		vars = append(vars, cmpserver.EnvParameters+"="+string(js))
	}
	env, err := cmpserver.ParseEnv(vars)
	if err != nil {
		return s, fmt.Errorf("%s: %w", a, err)
	}
	out, err := spec.ApplyOverrides(s, env.Overrides)
	if err != nil {
		return s, fmt.Errorf("%s: %w", a, err)
	}
	return out, nil
}
