package cmpserver

import (
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
	// AppName, AppNamespace and Project identify the Application (logs only).
	AppName, AppNamespace, Project string
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
	for _, kv := range vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		env[k] = v
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
