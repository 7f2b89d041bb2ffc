package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Collection types of a parameter, as Argo CD's ParameterAnnouncement names them.
const (
	CollectionString = "string"
	CollectionArray  = "array"
	CollectionMap    = "map"
)

// Param describes one spec field as an override (an Argo CD plugin parameter,
// a plugin env var): the name is the field's JSON name.
type Param struct {
	// Name is the spec field's JSON name (the parameter name).
	Name string
	// Title and Tooltip are shown in the Argo CD UI.
	Title, Tooltip string
	// Collection is "string", "array" or "map".
	Collection string
	// Structured fields (config, patches, syncWaves) take JSON or YAML text.
	Structured bool
	// Bool fields take "true" or "false".
	Bool bool

	index int // position in Spec
}

// paramDocs are the titles and tooltips of every spec field. A test checks it
// covers every field, so a new field cannot be silently left out of the UI.
var paramDocs = map[string][2]string{
	"bundle":                  {"Bundle", "OCI image reference of the registry+v1 bundle (tag or @digest optional), or a directory relative to the source directory (./bundle)"},
	"catalog":                 {"Catalog", "File-based catalog to pick the bundle from, instead of bundle: a catalog image reference or a directory relative to the source directory (./catalog)"},
	"package":                 {"Package", "OLM package to install from the catalog (required with catalog)"},
	"channel":                 {"Channel", "Catalog channel(s) to pick from, comma-separated; empty: every channel, as in OLM v1"},
	"version":                 {"Version", "Image tag to use when the bundle reference has neither tag nor digest; with catalog, a version range (1.2.x, >=1.0.0 <2, 1.2.3; empty: newest)"},
	"digest":                  {"Digest", "Pin of the bundle image, sha256:… (olm-cmp resolve prints it): the render fails if version (or the catalog's choice) names another image; bump version and digest together"},
	"namespace":               {"Namespace", "Namespace the operator is installed in (required)"},
	"createNamespace":         {"Create namespace", "Render the Namespace object (true or false; default true)"},
	"namespaceLabels":         {"Namespace labels", "Labels of the install Namespace the render creates, e.g. pod-security.kubernetes.io/enforce: privileged"},
	"namespaceAnnotations":    {"Namespace annotations", "Annotations of the install Namespace the render creates"},
	"watchNamespaces":         {"Watch namespaces", "Namespaces the operator watches; empty: all namespaces if the CSV supports it, else the install namespace"},
	"imagePullSecrets":        {"Image pull secrets", "Secret names added to every rendered ServiceAccount"},
	"serviceAccounts":         {"Extra service accounts", "ServiceAccounts to pre-create (operand SAs the operator creates later) so they carry the pull secrets"},
	"authReaderBinding":       {"Auth reader binding", "Bind the operator's ServiceAccounts to kube-system's extension-apiserver-authentication-reader (true or false)"},
	"exclude":                 {"Exclude", "Objects to drop, as [group/]Kind[/name] with * globs (e.g. ConsoleYAMLSample, console.openshift.io/*)"},
	"excludeFiles":            {"Exclude bundle files", "Files of the bundle's manifests/ to skip unread, e.g. manifests/broken.yaml (the way past a vendor's file that does not parse)"},
	"extraManifests":          {"Extra manifests", "Files beside olm-cmp.yaml to render (include) or to leave out (exclude), as file-name globs, e.g. {include: [crs.yaml], exclude: [out.yaml]}; default every *.yaml, *.yml and *.json file"},
	"images":                  {"Image rewrites", "Image prefix rewrites, from → to (e.g. registry.redhat.io/ → mirror.example.com/rh/)"},
	"config":                  {"Deployment config", "OLM SubscriptionConfig (env, resources, nodeSelector, tolerations, …) as JSON or YAML"},
	"certificateProvider":     {"Certificate provider", "Issuer of webhook certificates: cert-manager, service-ca or none (default cert-manager when the bundle has webhooks)"},
	"examples":                {"Examples", "Kinds of the CSV's alm-examples to render as custom resources"},
	"patches":                 {"Patches", "Kustomize patches (strategic merge or JSON 6902, with target) as a JSON or YAML list"},
	"syncWaves":               {"Sync waves", "Argo CD sync wave per group (crds, rbac, operator, webhooks, crs) as a JSON or YAML object"},
	"keepCRDs":                {"Keep CRDs", "Protect CRDs from deletion by Argo CD (true or false; default true)"},
	"strict":                  {"Strict", "Fail the render on every requirements finding not accepted and every spec entry that matches nothing (true or false)"},
	"upgradeConstraintPolicy": {"Upgrade constraint policy", "As OLM v1's: CatalogProvided (default) refuses an upgrade from upgradeFrom that the catalog's (or the CSVs') replaces, skips and skipRange do not allow; SelfCertified lets it through with a warning"},
	"requireSignature":        {"Require signature", "Refuse the render unless the bundle image (and a catalog image) is signed by a key or identity the cluster's trust policy trusts, even where the policy only warns (true or false; it can only tighten the policy)"},
	"clusterAPIs":             {"Cluster APIs", "APIs the cluster serves beyond vanilla Kubernetes, group/version or group (e.g. cert-manager.io/v1)"},
	"upgradeFrom":             {"Upgrade from", "The version the cluster runs today (the image tag, or the exact catalog version): the render fails if upgrading from it is unsafe (e.g. 1.19.1)"},
	"acknowledge":             {"Acknowledged safety findings", "Upgrade safety findings judged safe, each {rule, crd, version, path, reason} as olm-cmp diff -o json prints them, as a JSON or YAML list"},
	"accept":                  {"Accepted requirements", "Requirements findings accepted knowingly, category:subject with * globs (e.g. api:route.openshift.io)"},
}

// params is built at first use: it reflects over Spec, which commands that
// read no spec never need.
var params = sync.OnceValue(buildParams)

func buildParams() []Param {
	t := reflect.TypeOf(Spec{})
	var out []Param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		doc := paramDocs[name]
		p := Param{Name: name, Title: doc[0], Tooltip: doc[1], Collection: CollectionString, index: i}
		ft := f.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Bool {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.String:
		case ft.Kind() == reflect.Bool:
			p.Bool = true
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			p.Collection = CollectionArray
		case ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String && ft.Elem().Kind() == reflect.String:
			p.Collection = CollectionMap
		default:
			p.Structured = true
		}
		out = append(out, p)
	}
	return out
}

// Params lists every spec field as a parameter, in field order.
func Params() []Param { return append([]Param(nil), params()...) }

// FindParam returns the parameter with this exact name.
func FindParam(name string) (Param, bool) {
	for _, p := range params() {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// ParamNames is the list of names, for "did you mean" style messages.
func ParamNames() string {
	names := make([]string, len(params()))
	for i, p := range params() {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Override is one value for one spec field from one source. Exactly one of
// String, Array (non-nil, possibly empty) or Map (non-nil) is normally set;
// a string is accepted for every field and parsed by the field's type.
type Override struct {
	// Name is the spec field's JSON name.
	Name string
	// Source names where the value came from, for messages
	// (`parameter "namespace"`, `env ARGOCD_ENV_namespace`).
	Source string
	String *string
	Array  []string
	Map    map[string]string
}

// ApplyOverrides returns s with the overrides applied in order (a later one
// wins). It encodes s to a JSON object, replaces the named fields and decodes
// strictly again, so every value goes through the same decoding as
// olm-cmp.yaml. An unknown name, or a value that does not fit its field, is an
// error naming its source. An empty string means "not set" (Argo CD keeps
// parameters the user cleared as ""): to clear a list, pass an empty array.
func ApplyOverrides(s Spec, overrides []Override) (Spec, error) {
	if len(overrides) == 0 {
		return s, nil
	}
	base, err := json.Marshal(s)
	if err != nil {
		return s, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(base, &fields); err != nil {
		return s, err
	}
	for _, o := range overrides {
		p, ok := FindParam(o.Name)
		if !ok {
			return s, fmt.Errorf("%s: unknown spec field %s; known fields: %s", o.Source, echo.Quote(o.Name), ParamNames())
		}
		v, set, err := p.value(o)
		if err != nil {
			return s, fmt.Errorf("%s: %w", o.Source, err)
		}
		if set {
			fields[p.Name] = v
		}
	}
	merged, err := json.Marshal(fields)
	if err != nil {
		return s, err
	}
	var out Spec
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		// Each value was checked against its field above; this names the
		// overrides in case the spec type grows a shape value() misses.
		names := make([]string, len(overrides))
		for i, o := range overrides {
			names[i] = o.Source
		}
		return s, fmt.Errorf("applying %s: %s", strings.Join(names, ", "), cleanDecodeError(err))
	}
	return out, nil
}

// value turns an override into the JSON of its field; set is false when the
// override is empty and leaves the field as it was.
func (p Param) value(o Override) (v json.RawMessage, set bool, err error) {
	switch p.Collection {
	case CollectionArray:
		if o.Array != nil {
			return mustJSON(o.Array), true, nil
		}
	case CollectionMap:
		if o.Map != nil {
			return mustJSON(o.Map), true, nil
		}
	}
	if o.Array != nil || o.Map != nil {
		return nil, false, fmt.Errorf("%s takes %s: set the parameter's %s, not %s", p.Name, p.kindWord(), p.entryWord(), given(o))
	}
	if o.String == nil || strings.TrimSpace(*o.String) == "" {
		return nil, false, nil
	}
	str := strings.TrimSpace(*o.String)
	switch {
	case p.Bool:
		b, err := strconv.ParseBool(str)
		if err != nil {
			return nil, false, fmt.Errorf("%s must be true or false, got %s", p.Name, echo.Quote(str))
		}
		return mustJSON(b), true, nil
	case p.Structured:
		// Decoded as olm-cmp.yaml is, so the value means the same and its
		// problems read the same, each line naming this override's field.
		probe := reflect.New(reflect.TypeOf(Spec{}).Field(p.index).Type)
		problems, err := decodeAt([]byte(str), probe.Interface(), p.Name, nil)
		if err != nil {
			return nil, false, fmt.Errorf("%s must be JSON or YAML: %s", p.Name, strings.TrimPrefix(err.Error(), "not valid YAML: "))
		}
		if len(problems) > 0 {
			lines := make([]string, len(problems))
			for i, pr := range problems {
				// A line number helps in a value of several lines only.
				if lines[i] = pr.msg; strings.Contains(str, "\n") {
					lines[i] = pr.String()
				}
			}
			return nil, false, errors.New(strings.Join(lines, "\n"))
		}
		return mustJSON(probe.Elem().Interface()), true, nil
	case p.Collection == CollectionArray:
		// A JSON list, or comma-separated words (the natural env var form).
		if strings.HasPrefix(str, "[") {
			var list []string
			if err := json.Unmarshal([]byte(str), &list); err != nil {
				return nil, false, fmt.Errorf("%s must be a JSON list of strings or comma-separated: %v", p.Name, err)
			}
			return mustJSON(list), true, nil
		}
		list := []string{}
		for _, item := range strings.Split(str, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		return mustJSON(list), true, nil
	case p.Collection == CollectionMap:
		// A JSON object, or comma-separated from=to pairs.
		if strings.HasPrefix(str, "{") {
			var m map[string]string
			if err := json.Unmarshal([]byte(str), &m); err != nil {
				return nil, false, fmt.Errorf("%s must be a JSON object of strings or comma-separated key=value pairs: %v", p.Name, err)
			}
			return mustJSON(m), true, nil
		}
		m := map[string]string{}
		for _, pair := range strings.Split(str, ",") {
			if pair = strings.TrimSpace(pair); pair == "" {
				continue
			}
			k, val, ok := strings.Cut(pair, "=")
			if !ok {
				return nil, false, fmt.Errorf("%s: %s is not key=value", p.Name, echo.Quote(pair))
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
		return mustJSON(m), true, nil
	default:
		return mustJSON(str), true, nil
	}
}

func (p Param) kindWord() string {
	switch {
	case p.Structured:
		return "JSON or YAML text"
	case p.Bool:
		return "true or false"
	case p.Collection == CollectionArray:
		return "a list"
	case p.Collection == CollectionMap:
		return "a map"
	}
	return "a single string"
}

// entryWord names the entry of Argo CD's parameter that carries p's value.
func (p Param) entryWord() string {
	switch p.Collection {
	case CollectionArray:
		return `"array"`
	case CollectionMap:
		return `"map"`
	}
	return `"string"`
}

// given names the entry an override set, for messages.
func given(o Override) string {
	switch {
	case o.Array != nil:
		return `"array"`
	case o.Map != nil:
		return `"map"`
	}
	return `"string"`
}

// Current is the field's value in s in the form a parameter carries it:
// exactly one of the results is meaningful, by p.Collection. Bools show their
// effective value (defaults applied); structured fields are compact JSON.
func (p Param) Current(s *Spec) (str string, array []string, m map[string]string) {
	f := reflect.ValueOf(s).Elem().Field(p.index)
	switch {
	case p.Bool:
		switch p.Name {
		case "createNamespace":
			return strconv.FormatBool(s.CreatesNamespace()), nil, nil
		case "keepCRDs":
			return strconv.FormatBool(s.KeepsCRDs()), nil, nil
		}
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				return "", nil, nil
			}
			f = f.Elem()
		}
		return strconv.FormatBool(f.Bool()), nil, nil
	case p.Structured:
		if f.IsZero() {
			return "", nil, nil
		}
		return strings.TrimSpace(string(mustJSON(f.Interface()))), nil, nil
	case p.Collection == CollectionArray:
		return "", append([]string{}, f.Interface().([]string)...), nil
	case p.Collection == CollectionMap:
		out := map[string]string{}
		for k, v := range f.Interface().(map[string]string) {
			out[k] = v
		}
		return "", nil, out
	}
	return f.String(), nil, nil
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings, lists, maps and spec types reach here
	}
	return bytes.TrimSpace(buf.Bytes())
}

// cleanDecodeError strips encoding/json's prefixes from a decode error, so an
// override's message reads like the file's (which DecodeStrict reports).
func cleanDecodeError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: ")
	return strings.Replace(msg, "json: unknown field", "unknown field", 1)
}
