package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Environment names Argo CD gives a plugin that carry spec overrides. They
// live here, not in a transport, because every reader of an Application's
// plugin section (the CMP server, `olm-cmp upgrade`) must turn them into
// overrides by the same rules.
const (
	EnvParameters = "ARGOCD_APP_PARAMETERS"
	// EnvPluginPrefix prefixes the Application's plugin.env entries.
	EnvPluginPrefix = "ARGOCD_ENV_"
	// EnvParamPrefix prefixes the flattened parameters (PARAM_NAME, PARAM_NAME_0).
	EnvParamPrefix = "PARAM_"
)

// PluginEnvSource starts the Source of an override from a plugin env var.
const PluginEnvSource = "plugin env "

// PluginOverrides reads the spec overrides of a plugin environment, in order
// of increasing precedence: plugin env (ARGOCD_ENV_*), then parameters. vars
// are NAME=VALUE strings, as os.Environ returns and the CMP stream's EnvEntry
// list carries.
//
// Naming: a parameter's name is a spec field's JSON name, exactly
// ("watchNamespaces"). A plugin env var is ARGOCD_ENV_ followed by the field
// name in any case, with '_' and '-' ignored, because env names are often
// written upper-case: ARGOCD_ENV_namespace, ARGOCD_ENV_NAMESPACE and
// ARGOCD_ENV_WATCH_NAMESPACES all work. An unknown name is reported by
// ApplyOverrides, as an unknown key in olm-cmp.yaml is. PARAM_* variables are
// read only when ARGOCD_APP_PARAMETERS is absent (Argo CD always sends both;
// the JSON form is the lossless one).
func PluginOverrides(vars []string) ([]Override, error) {
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
	var out []Override
	for _, k := range order {
		if strings.HasPrefix(k, EnvPluginPrefix) {
			out = append(out, PluginEnvOverride(strings.TrimPrefix(k, EnvPluginPrefix), env[k]))
		}
	}
	if js, ok := env[EnvParameters]; ok && strings.TrimSpace(js) != "" {
		var ps []Parameter
		if err := json.Unmarshal([]byte(js), &ps); err != nil {
			return nil, fmt.Errorf("%s is not the JSON list Argo CD sends: %v", EnvParameters, err)
		}
		for _, p := range ps {
			out = append(out, p.Override())
		}
	} else {
		out = append(out, paramVars(env)...)
	}
	return out, nil
}

// PluginEnvOverride is the override of one Application plugin.env entry
// (name without the ARGOCD_ENV_ prefix Argo CD adds).
func PluginEnvOverride(name, value string) Override {
	return Override{
		Name:   looseParamName(name),
		Source: PluginEnvSource + echo.Short(EnvPluginPrefix+name),
		String: &value,
	}
}

// Parameter is one entry of ARGOCD_APP_PARAMETERS, Argo CD's
// ApplicationSourcePluginParameter in JSON. Array and Map are pointers so an
// explicit empty list or map (the user emptied it: clear the field) is told
// from an absent one.
type Parameter struct {
	Name   string             `json:"name"`
	String *string            `json:"string,omitempty"`
	Array  *[]string          `json:"array,omitempty"`
	Map    *map[string]string `json:"map,omitempty"`
}

// Override is the parameter as a spec override.
func (p Parameter) Override() Override {
	o := Override{Name: p.Name, Source: "parameter " + echo.Quote(p.Name), String: p.String}
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
	return o
}

// looseParamName maps an env-style name to the spec field it means, or
// returns it unchanged (ApplyOverrides then reports it as unknown).
func looseParamName(raw string) string {
	want := fold(raw)
	for _, p := range params() {
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

// paramVars rebuilds parameters from PARAM_NAME (a string) and PARAM_NAME_<i>
// (an array). Map parameters cannot be rebuilt (Argo CD upper-cases the
// keys), so they need ARGOCD_APP_PARAMETERS; names that are no spec field
// (such as a map's PARAM_IMAGES_<KEY>) are skipped, as this is only the
// fallback for an environment without ARGOCD_APP_PARAMETERS.
func paramVars(env map[string]string) []Override {
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
	var out []Override
	known := func(name string) bool { _, ok := FindParam(looseParamName(name)); return ok }
	for _, name := range slices.Sorted(maps.Keys(strs)) {
		v := strs[name]
		if !known(name) {
			continue
		}
		out = append(out, Override{Name: looseParamName(name), Source: "parameter env " + EnvParamPrefix + name, String: &v})
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
		out = append(out, Override{Name: looseParamName(name), Source: "parameter env " + EnvParamPrefix + name + "_*", Array: list})
	}
	return out
}
