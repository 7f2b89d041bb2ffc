package cmpserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
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
	EnvParameters    = "ARGOCD_APP_PARAMETERS"
	// EnvPluginPrefix prefixes the Application's plugin.env entries.
	EnvPluginPrefix = "ARGOCD_ENV_"
	// EnvParamPrefix prefixes the flattened parameters (PARAM_NAME, PARAM_NAME_0).
	EnvParamPrefix = "PARAM_"
)

// pluginEnvSource starts the Source of an override from a plugin env var.
const pluginEnvSource = "plugin env "

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
// os.Environ returns and the CMP stream's EnvEntry list carries.
//
// Naming: a parameter's name is a spec field's JSON name, exactly
// ("watchNamespaces"). A plugin env var is ARGOCD_ENV_ followed by the field
// name in any case, with '_' and '-' ignored, because env names are often
// written upper-case: ARGOCD_ENV_namespace, ARGOCD_ENV_NAMESPACE and
// ARGOCD_ENV_WATCH_NAMESPACES all work. An unknown name is an error that
// names it, as an unknown key in olm-cmp.yaml is. PARAM_* variables are read
// only when ARGOCD_APP_PARAMETERS is absent (Argo CD always sends both; the
// JSON form is the lossless one).
func ParseEnv(vars []string) (*AppEnv, error) {
	env := map[string]string{}
	var order []string
	for _, kv := range vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, seen := env[k]; !seen {
			order = append(order, k)
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

	for _, k := range order {
		if !strings.HasPrefix(k, EnvPluginPrefix) {
			continue
		}
		raw := strings.TrimPrefix(k, EnvPluginPrefix)
		val := env[k]
		a.Overrides = append(a.Overrides, spec.Override{
			Name:   looseParamName(raw),
			Source: pluginEnvSource + echo.Short(k),
			String: &val,
		})
	}

	if js, ok := env[EnvParameters]; ok && strings.TrimSpace(js) != "" {
		ps, err := parseParametersJSON(js)
		if err != nil {
			return nil, err
		}
		a.Overrides = append(a.Overrides, ps...)
	} else {
		a.Overrides = append(a.Overrides, paramVars(env)...)
	}
	return a, nil
}

// looseParamName maps an env-style name to the spec field it means, or
// returns it unchanged (ApplyOverrides then reports it as unknown).
func looseParamName(raw string) string {
	want := fold(raw)
	for _, p := range spec.Params() {
		if fold(p.Name) == want {
			return p.Name
		}
	}
	return raw
}

func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// parameter is one entry of ARGOCD_APP_PARAMETERS, Argo CD's
// ApplicationSourcePluginParameter in JSON. Array and Map are pointers so an
// explicit empty list or map (the user emptied it: clear the field) is told
// from an absent one.
type parameter struct {
	Name   string             `json:"name"`
	String *string            `json:"string,omitempty"`
	Array  *[]string          `json:"array,omitempty"`
	Map    *map[string]string `json:"map,omitempty"`
}

func parseParametersJSON(js string) ([]spec.Override, error) {
	var ps []parameter
	if err := json.Unmarshal([]byte(js), &ps); err != nil {
		return nil, fmt.Errorf("%s is not the JSON list Argo CD sends: %v", EnvParameters, err)
	}
	out := make([]spec.Override, 0, len(ps))
	for _, p := range ps {
		o := spec.Override{Name: p.Name, Source: "parameter " + echo.Quote(p.Name), String: p.String}
		if p.Array != nil {
			o.Array = *p.Array
			if o.Array == nil {
				o.Array = []string{}
			}
		}
		if p.Map != nil {
			o.Map = *p.Map
			if o.Map == nil {
				o.Map = map[string]string{}
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// paramVars rebuilds parameters from PARAM_NAME (a string) and PARAM_NAME_<i>
// (an array). Map parameters cannot be rebuilt (Argo CD upper-cases the
// keys), so they need ARGOCD_APP_PARAMETERS; names that are no spec field
// (such as a map's PARAM_IMAGES_<KEY>) are skipped, as this is only the
// fallback for an environment without ARGOCD_APP_PARAMETERS.
func paramVars(env map[string]string) []spec.Override {
	strs := map[string]string{}
	arrays := map[string]map[int]string{}
	for k, v := range env {
		if !strings.HasPrefix(k, EnvParamPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, EnvParamPrefix)
		if i := strings.LastIndex(name, "_"); i > 0 {
			if n, err := strconv.Atoi(name[i+1:]); err == nil {
				if arrays[name[:i]] == nil {
					arrays[name[:i]] = map[int]string{}
				}
				arrays[name[:i]][n] = v
				continue
			}
		}
		strs[name] = v
	}
	var out []spec.Override
	known := func(name string) bool { _, ok := spec.FindParam(looseParamName(name)); return ok }
	for _, name := range slices.Sorted(maps.Keys(strs)) {
		v := strs[name]
		if !known(name) {
			continue
		}
		out = append(out, spec.Override{Name: looseParamName(name), Source: "parameter env " + EnvParamPrefix + name, String: &v})
	}
	for _, name := range slices.Sorted(maps.Keys(arrays)) {
		items := arrays[name]
		if !known(name) {
			continue
		}
		idx := make([]int, 0, len(items))
		for i := range items {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		list := make([]string, 0, len(idx))
		for _, i := range idx {
			list = append(list, items[i])
		}
		out = append(out, spec.Override{Name: looseParamName(name), Source: "parameter env " + EnvParamPrefix + name + "_*", Array: list})
	}
	return out
}
