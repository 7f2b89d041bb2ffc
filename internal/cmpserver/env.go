package cmpserver

import (
	"fmt"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Environment names Argo CD gives a plugin.
const (
	EnvAppName       = "ARGOCD_APP_NAME"
	EnvAppNamespace  = "ARGOCD_APP_NAMESPACE"
	EnvAppProject    = "ARGOCD_APP_PROJECT_NAME"
	EnvAppRevision   = "ARGOCD_APP_REVISION"
	EnvSourceRepoURL = "ARGOCD_APP_SOURCE_REPO_URL"
	EnvSourcePath    = "ARGOCD_APP_SOURCE_PATH"
	EnvKubeVersion   = "KUBE_VERSION"
	EnvAPIVersions   = "KUBE_API_VERSIONS"
	// EnvParameters, EnvPluginPrefix and EnvParamPrefix carry the spec
	// overrides, read by spec.PluginOverrides.
	EnvParameters   = spec.EnvParameters
	EnvPluginPrefix = spec.EnvPluginPrefix
	EnvParamPrefix  = spec.EnvParamPrefix
)

// AppEnv is what olm-cmp takes from the environment Argo CD builds for a plugin.
type AppEnv struct {
	// AppName and AppNamespace identify the Application (logs only).
	AppName, AppNamespace string
	// Project is the Application's Argo CD project, as the repo-server
	// sends it (ARGOCD_APP_PROJECT_NAME): who is asking, under a tenancy
	// policy. Only that exact name sets it; the Application's own plugin
	// env arrives as ARGOCD_ENV_* and its parameters as PARAM_* or
	// ARGOCD_APP_PARAMETERS, none of which can.
	Project string
	// SourcePath and Revision locate the source (logs only).
	SourcePath, Revision string
	// APIVersions are KUBE_API_VERSIONS split on commas; nil when Argo CD sent
	// none (then nothing is dropped for lack of an API).
	APIVersions []string
	// Overrides are the spec overrides in order of increasing precedence:
	// plugin env (ARGOCD_ENV_*), then parameters.
	Overrides []spec.Override
}

// ParseEnv reads the plugin environment. vars are NAME=VALUE strings, as
// os.Environ returns and the CMP stream's EnvEntry list carries. The spec
// overrides (plugin env and parameters) are spec.PluginOverrides', whose
// naming rules `olm-cmp upgrade` applies too.
func ParseEnv(vars []string) (*AppEnv, error) {
	env := map[string]string{}
	projects := 0
	for _, kv := range vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if k == EnvAppProject {
			projects++
		}
		env[k] = v
	}
	if projects > 1 {
		// The repo-server sends it once; twice, one of them came from
		// somewhere else, and which one is meant cannot be known.
		return nil, fmt.Errorf("the plugin environment names %s %d times: it is set once, by the repo-server; check what else adds it", EnvAppProject, projects)
	}
	a := &AppEnv{
		AppName:      env[EnvAppName],
		AppNamespace: env[EnvAppNamespace],
		Project:      env[EnvAppProject],
		SourcePath:   env[EnvSourcePath],
		Revision:     env[EnvAppRevision],
	}
	if v := strings.TrimSpace(env[EnvAPIVersions]); v != "" {
		for _, gv := range strings.Split(v, ",") {
			if gv = strings.TrimSpace(gv); gv != "" {
				a.APIVersions = append(a.APIVersions, gv)
			}
		}
	}

	overrides, err := spec.PluginOverrides(vars)
	if err != nil {
		return nil, err
	}
	a.Overrides = overrides
	return a, nil
}
