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

// registryFlags configure how bundle images are pulled and cached.
type registryFlags struct {
	registryConfig string
	insecure       []string
	cacheDir       string
}

func (f *registryFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.registryConfig, "registry-config", "", "docker config.json with registry credentials (default: the docker/podman default keychain)")
	fs.StringArrayVar(&f.insecure, "insecure-registry", nil, "registry host[:port] reached over plain HTTP or with unverified TLS, repeatable (opt-in)")
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "directory for extracted bundles, keyed by digest")
}

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "olm-cmp", "bundles")
	}
	return filepath.Join(os.TempDir(), "olm-cmp", "bundles")
}

// loader builds the image loader; directories never need it.
func (f *registryFlags) loader() (render.Loader, error) {
	if f.registryConfig != "" {
		if _, err := os.Stat(f.registryConfig); err != nil {
			return nil, fmt.Errorf("--registry-config: %w", err)
		}
	}
	return &bundle.ImageLoader{CacheDir: f.cacheDir, RegistryConfig: f.registryConfig, Insecure: f.insecure}, nil
}

// isDir reports whether ref names a local directory: an explicit path, or a
// directory that exists.
func isDir(ref string) bool {
	if ref == "." || ref == ".." || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || filepath.IsAbs(ref) {
		return true
	}
	fi, err := os.Stat(ref)
	return err == nil && fi.IsDir()
}
