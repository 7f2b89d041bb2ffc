package cmpserver

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// BuildRequest reads appDir/olm-cmp.yaml and applies the environment's
// overrides (parameters > plugin env > file). rootDir bounds relative bundle
// directories (the repository root); "" trusts the filesystem.
func BuildRequest(appDir, rootDir string, env *AppEnv) (render.Request, error) {
	f, err := spec.Load(appDir)
	if err != nil {
		return render.Request{}, err
	}
	s, err := spec.ApplyOverrides(f.Spec, env.Overrides)
	if err != nil {
		return render.Request{}, err
	}
	if err := f.Validate(&s); err != nil {
		return render.Request{}, err // with the line of each value the file wrote
	}
	name := f.Metadata.Name
	if name == "" {
		name = env.AppName
	}
	return render.Request{Spec: s, Name: name, SourceDir: appDir, RootDir: rootDir, APIVersions: env.APIVersions}, nil
}

// HasSpec reports whether dir holds olm-cmp.yaml (discovery).
func HasSpec(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, spec.FileName))
	return err == nil && fi.Mode().IsRegular()
}

// Announcement is Argo CD's ParameterAnnouncement in the JSON a dynamic
// parameters command prints (the same field names as the proto's JSON).
type Announcement struct {
	Name           string            `json:"name"`
	Title          string            `json:"title,omitempty"`
	Tooltip        string            `json:"tooltip,omitempty"`
	Required       bool              `json:"required,omitempty"`
	ItemType       string            `json:"itemType,omitempty"`
	CollectionType string            `json:"collectionType,omitempty"`
	String         string            `json:"string,omitempty"`
	Array          []string          `json:"array,omitempty"`
	Map            map[string]string `json:"map,omitempty"`
}

// Announce lists every spec field as a parameter, with its current value
// from appDir/olm-cmp.yaml and the plugin env (parameters are what the user
// sets on top, so they are not folded in). Without olm-cmp.yaml the values
// are empty; an invalid file is an error, so the UI shows what to fix.
func Announce(appDir string, env *AppEnv) ([]Announcement, error) {
	var cur spec.Spec
	if HasSpec(appDir) {
		f, err := spec.Load(appDir)
		if err != nil {
			return nil, err
		}
		var envOnly []spec.Override
		for _, o := range env.Overrides {
			if strings.HasPrefix(o.Source, pluginEnvSource) {
				envOnly = append(envOnly, o)
			}
		}
		if cur, err = spec.ApplyOverrides(f.Spec, envOnly); err != nil {
			return nil, err
		}
	}
	var out []Announcement
	for _, p := range spec.Params() {
		a := Announcement{
			Name:           p.Name,
			Title:          p.Title,
			Tooltip:        p.Tooltip,
			Required:       p.Name == "bundle" || p.Name == "namespace",
			ItemType:       "string",
			CollectionType: p.Collection,
		}
		a.String, a.Array, a.Map = p.Current(&cur)
		out = append(out, a)
	}
	return out, nil
}

// toProto converts announcements for the gRPC reply.
func toProto(as []Announcement) []*pluginpb.ParameterAnnouncement {
	out := make([]*pluginpb.ParameterAnnouncement, len(as))
	for i, a := range as {
		out[i] = &pluginpb.ParameterAnnouncement{
			Name: a.Name, Title: a.Title, Tooltip: a.Tooltip, Required: a.Required,
			ItemType: a.ItemType, CollectionType: a.CollectionType,
			String_: a.String, Array: a.Array, Map: a.Map,
		}
	}
	return out
}
