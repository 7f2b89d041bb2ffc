package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/registry"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/safety"
	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/validate"
)

// Environment equivalents of the registry flags, for deployments where the
// command line is not the user's to edit (the classic mode's plugin.yaml
// args): set them on the sidecar container. A flag given on the command line
// wins over its variable.
const (
	EnvRegistryConfig     = "OLM_CMP_REGISTRY_CONFIG"
	EnvInsecureRegistries = "OLM_CMP_INSECURE_REGISTRIES" // comma-separated
	EnvAllowedRegistries  = "OLM_CMP_ALLOWED_REGISTRIES"  // comma-separated
	EnvRegistryTimeout    = "OLM_CMP_REGISTRY_TIMEOUT"    // a duration, e.g. 30s
	EnvCacheDir           = "OLM_CMP_CACHE_DIR"
)

// registryFlags configure how bundle images are pulled and cached.
type registryFlags struct {
	registryConfig  string
	insecure        []string
	allowed         []string
	registryTimeout time.Duration
	cacheDir        string
	trustPolicy     string
	tenancyPolicy   string
	// project is --project (render, diff, upgrade only: projectFlag).
	project     string
	projectFlag bool
	tenancyOn   bool // registerTenancy was called
	// envErr is a variable that does not parse, reported by loader.
	envErr error

	// note reports a setting that is used in a degraded way (a registry
	// config file that is not there), once per process; serve sets its
	// logger, others write a line to stderr.
	note     func(msg string)
	noteOnce sync.Once

	fs       *pflag.FlagSet
	resolved bool
	// source names where each setting came from, for error messages.
	registryConfigFrom, cacheDirFrom string
}

func (f *registryFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.registryConfig, "registry-config", "", "docker config.json with registry credentials (default: the docker/podman default keychain; env "+EnvRegistryConfig+")")
	fs.StringArrayVar(&f.insecure, "insecure-registry", nil, "registry host[:port] reached over plain HTTP or with unverified TLS, repeatable (opt-in; env "+EnvInsecureRegistries+", comma-separated)")
	fs.StringSliceVar(&f.allowed, "allowed-registries", nil, "the only registries (host[:port], comma-separated; docker.io for Docker Hub) bundle and catalog images may come from; empty allows all (env "+EnvAllowedRegistries+")")
	fs.DurationVar(&f.registryTimeout, "registry-timeout", registry.DefaultResponseHeaderTimeout, "how long a registry may take to start answering a request, or stay silent while sending a body (env "+EnvRegistryTimeout+")")
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "directory for extracted bundles, keyed by digest (env "+EnvCacheDir+")")
	registerTrust(fs, &f.trustPolicy)
}

// splitList splits a comma-separated variable, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, h := range strings.Split(v, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
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
		f.insecure = splitList(v)
	}
	if v, ok := os.LookupEnv(EnvAllowedRegistries); ok && !changed("allowed-registries") {
		f.allowed = splitList(v)
	}
	if v, ok := os.LookupEnv(EnvRegistryTimeout); ok && v != "" && !changed("registry-timeout") {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			f.envErr = fmt.Errorf("%s=%q: not a positive duration such as 30s or 2m", EnvRegistryTimeout, v)
		}
		f.registryTimeout = d
	}
}

func (f *registryFlags) notef(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if f.note != nil {
		f.note(msg)
		return
	}
	fmt.Fprintf(os.Stderr, "olm-cmp: note: %s\n", msg)
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
	if f.envErr != nil {
		return nil, f.envErr
	}
	if f.registryTimeout <= 0 {
		return nil, fmt.Errorf("--registry-timeout %s: must be positive", f.registryTimeout)
	}
	if f.registryConfig != "" {
		present, err := registry.CheckRegistryConfig(f.registryConfig)
		if err != nil {
			return nil, fmt.Errorf("%s %w", f.registryConfigFrom, err)
		}
		if !present {
			f.noteOnce.Do(func() {
				f.notef("%s %s does not exist: pulling without registry credentials until it does (it is read on every pull)",
					f.registryConfigFrom, f.registryConfig)
			})
		}
	}
	validate.KeepVerdicts(f.cacheDir) // CRD verdicts beside the bundles: the next process skips their CEL compiles
	trust.KeepVerdicts(f.cacheDir)    // and the trust policy's trusted roots, parsed by olm-cmp-check once
	safety.KeepVerdicts(f.cacheDir)   // and crdify's comparisons: the next diff or upgrade skips olm-cmp-check
	return &bundle.ImageLoader{
		CacheDir:          f.cacheDir,
		RegistryConfig:    f.registryConfig,
		Insecure:          f.insecure,
		AllowedRegistries: f.allowed,
		Timeouts:          registry.Timeouts{ResponseHeader: f.registryTimeout, ReadIdle: f.registryTimeout},
	}, nil
}

// clusterFlags simulate the target cluster, as Argo CD describes it to the
// plugin.
type clusterFlags struct {
	apiVersions []string
	fs          *pflag.FlagSet
}

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	c.fs = fs
	fs.StringSliceVar(&c.apiVersions, "api-versions", nil, "the group/versions the target cluster serves, all of them, comma-separated as `kubectl api-versions | paste -sd, -` prints them, as Argo CD's "+cmpserver.EnvAPIVersions+" (read when the flag is absent): objects of other APIs are dropped with a warning, and the requirements report judges by them")
}

// apply replaces the request's API versions (from the environment: see
// envAPIVersions) with the flag's, when given. A typo here would silently
// drop every object of that API, so each entry must read as a group/version.
func (c *clusterFlags) apply(req *render.Request) error {
	if c.fs == nil || !c.fs.Changed("api-versions") {
		return nil
	}
	list := splitList(strings.Join(c.apiVersions, ","))
	for _, gv := range list {
		if !render.IsAPIListEntry(gv) {
			return fmt.Errorf("--api-versions %q: not a group/version: write v1 for the core API, else group/version (apps/v1, cert-manager.io/v1)", gv)
		}
	}
	if err := render.CheckAPIVersions("--api-versions", list); err != nil {
		return err
	}
	req.APIVersions = list
	return nil
}

// envAPIVersions is KUBE_API_VERSIONS split on commas, nil when unset or
// empty (the cluster unknown: nothing dropped), so that a one-shot command
// renders as the plugin does in the same environment.
func envAPIVersions() []string {
	return splitList(os.Getenv(cmpserver.EnvAPIVersions))
}
