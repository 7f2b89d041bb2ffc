package cmpserver

import (
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// DefaultConfigPath is where Argo CD's sidecar convention mounts plugin.yaml.
const DefaultConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"

// Built-in plugin name and version, used when no plugin.yaml is mounted. They
// match the repository's plugin.yaml, so both modes answer to the same name.
const (
	DefaultPluginName    = "olm-cmp"
	DefaultPluginVersion = "v1"
)

// PluginConfig is the part of Argo CD's ConfigManagementPlugin (plugin.yaml)
// the server reads: its name and version make the socket name, the presence
// of spec.discover says whether Argo CD should ask MatchRepository, and
// provideGitCreds is passed on. Every other field is for Argo CD's own
// cmp-server (the classic mode) and is ignored: in particular the native
// server always discovers by olm-cmp.yaml, whatever spec.discover says.
type PluginConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version         string    `json:"version"`
		Discover        *Discover `json:"discover,omitempty"`
		ProvideGitCreds bool      `json:"provideGitCreds"`
	} `json:"spec"`
}

// Discover is plugin.yaml's spec.discover, as Argo CD's cmp-server reads it.
type Discover struct {
	FileName string `json:"fileName,omitempty"`
	Find     struct {
		Glob    string   `json:"glob,omitempty"`
		Command []string `json:"command,omitempty"`
	} `json:"find"`
}

// DiscoveryConfigured reports whether plugin.yaml configures discovery: a
// spec.discover section with a fileName, find.glob or find.command, the rule
// of Argo CD's own cmp-server (an empty section configures nothing).
func (c *PluginConfig) DiscoveryConfigured() bool {
	d := c.Spec.Discover
	return d != nil && (d.FileName != "" || d.Find.Glob != "" || len(d.Find.Command) > 0)
}

// DefaultPluginConfig is the configuration without a plugin.yaml: it matches
// the repository's plugin.yaml, discovery by olm-cmp.yaml included.
func DefaultPluginConfig() *PluginConfig {
	c := &PluginConfig{APIVersion: "argoproj.io/v1alpha1", Kind: "ConfigManagementPlugin"}
	c.Metadata.Name = DefaultPluginName
	c.Spec.Version = DefaultPluginVersion
	c.Spec.Discover = &Discover{FileName: spec.FileName}
	return c
}

// LoadPluginConfig reads plugin.yaml. A missing file at the default path
// means the built-in defaults; a missing file the user named is an error.
func LoadPluginConfig(path string, explicit bool) (*PluginConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			return DefaultPluginConfig(), nil
		}
		return nil, fmt.Errorf("plugin config: %w", err)
	}
	var c PluginConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("plugin config %s: %v", path, err)
	}
	if c.Kind != "ConfigManagementPlugin" {
		return nil, fmt.Errorf("plugin config %s: kind must be ConfigManagementPlugin, got %q", path, c.Kind)
	}
	if c.Metadata.Name == "" {
		return nil, fmt.Errorf("plugin config %s: metadata.name is required (it names the socket Argo CD dials)", path)
	}
	return &c, nil
}

// SocketName is <name>-<version>.sock, or <name>.sock without a version:
// Argo CD lists plugins by these file names.
func (c *PluginConfig) SocketName() string {
	if c.Spec.Version == "" {
		return c.Metadata.Name + ".sock"
	}
	return c.Metadata.Name + "-" + c.Spec.Version + ".sock"
}
