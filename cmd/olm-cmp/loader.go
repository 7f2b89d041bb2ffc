package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
)

// Environment equivalents of the registry flags, for deployments where the
// command line is not the user's to edit (the classic mode's plugin.yaml
// args): set them on the sidecar container. A flag given on the command line
// wins over its variable.
const (
	EnvRegistryConfig     = "OLM_CMP_REGISTRY_CONFIG"
	EnvInsecureRegistries = "OLM_CMP_INSECURE_REGISTRIES" // comma-separated
	EnvCacheDir           = "OLM_CMP_CACHE_DIR"
)

// registryFlags configure how bundle images are pulled and cached.
type registryFlags struct {
	registryConfig string
	insecure       []string
	cacheDir       string

	fs       *pflag.FlagSet
	resolved bool
	// source names where each setting came from, for error messages.
	registryConfigFrom, cacheDirFrom string
}

func (f *registryFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.registryConfig, "registry-config", "", "docker config.json with registry credentials (default: the docker/podman default keychain; env "+EnvRegistryConfig+")")
	fs.StringArrayVar(&f.insecure, "insecure-registry", nil, "registry host[:port] reached over plain HTTP or with unverified TLS, repeatable (opt-in; env "+EnvInsecureRegistries+", comma-separated)")
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "directory for extracted bundles, keyed by digest (env "+EnvCacheDir+")")
}

// resolve applies the environment variables of the flags not given on the
// command line. It is idempotent.
func (f *registryFlags) resolve() {
	if f.resolved {
		return
	}
	f.resolved = true
	f.registryConfigFrom, f.cacheDirFrom = "--registry-config", "--cache-dir"
	changed := func(name string) bool { return f.fs != nil && f.fs.Changed(name) }
	if v, ok := os.LookupEnv(EnvRegistryConfig); ok && v != "" && !changed("registry-config") {
		f.registryConfig, f.registryConfigFrom = v, EnvRegistryConfig
	}
	if v, ok := os.LookupEnv(EnvCacheDir); ok && v != "" && !changed("cache-dir") {
		f.cacheDir, f.cacheDirFrom = v, EnvCacheDir
	}
	if v, ok := os.LookupEnv(EnvInsecureRegistries); ok && !changed("insecure-registry") {
		f.insecure = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				f.insecure = append(f.insecure, h)
			}
		}
	}
}

// explicitCacheDir reports whether the user chose the cache directory (flag
// or environment), rather than getting the default.
func (f *registryFlags) explicitCacheDir() bool {
	f.resolve()
	return f.cacheDirFrom != "--cache-dir" || (f.fs != nil && f.fs.Changed("cache-dir"))
}

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "olm-cmp", "bundles")
	}
	return filepath.Join(os.TempDir(), "olm-cmp", "bundles")
}

// loader builds the image loader; directories never need it.
func (f *registryFlags) loader() (*bundle.ImageLoader, error) {
	f.resolve()
	if f.registryConfig != "" {
		if _, err := os.Stat(f.registryConfig); err != nil {
			return nil, fmt.Errorf("%s: %w", f.registryConfigFrom, err)
		}
	}
	return &bundle.ImageLoader{CacheDir: f.cacheDir, RegistryConfig: f.registryConfig, Insecure: f.insecure}, nil
}

// isDir reports whether ref names a local directory: an explicit path (the
// spec's rule), or, on the command line only, a directory that exists.
func isDir(ref string) bool {
	if render.IsDirRef(ref) {
		return true
	}
	fi, err := os.Stat(ref)
	return err == nil && fi.IsDir()
}
