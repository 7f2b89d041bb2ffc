package engine

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/olm-cmp/olm-cmp/internal/tenancy"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// Metrics are the Prometheus series of one server. They live in their own
// registry (not the global one) so tests and embedded servers do not collide.
type Metrics struct {
	// Registry gathers every series below plus the Go and process collectors.
	Registry *prometheus.Registry

	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	inflight      prometheus.Gauge
	cacheHits     *prometheus.CounterVec
	cacheMisses   *prometheus.CounterVec
	renders       *prometheus.CounterVec
	resolves      *prometheus.CounterVec
	pulls         *prometheus.CounterVec
	bytesServed   *prometheus.CounterVec
	bytesReceived prometheus.Counter
	projects      *prometheus.CounterVec

	labelsMu sync.Mutex
	labels   map[string]bool // project labels seen, bounded by maxProjectLabels
}

// maxProjectLabels bounds the project label's values: a policy has at most
// tenancy.MaxProjects entries, but reloads may name others over a
// process's life.
const maxProjectLabels = 1024

// Metric names, exported so tests and dashboards agree on them.
const (
	MetricRequests      = "olm_cmp_requests_total"
	MetricDuration      = "olm_cmp_request_duration_seconds"
	MetricInflight      = "olm_cmp_requests_in_flight"
	MetricCacheHits     = "olm_cmp_cache_hits_total"
	MetricCacheMisses   = "olm_cmp_cache_misses_total"
	MetricRenders       = "olm_cmp_renders_total"
	MetricResolves      = "olm_cmp_registry_resolves_total"
	MetricPulls         = "olm_cmp_registry_pulls_total"
	MetricBytesServed   = "olm_cmp_bytes_served_total"
	MetricBytesReceived = "olm_cmp_stream_bytes_received_total"
	MetricProjects      = "olm_cmp_project_requests_total"
)

// NewMetrics registers every series in a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRequests,
			Help: "Requests by RPC (GenerateManifest, MatchRepository, GetParametersAnnouncement, CheckPluginConfiguration, http_render) and outcome (a gRPC status code name; OK on success).",
		}, []string{"rpc", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricDuration,
			Help: "Request latency by RPC and outcome, from the first message received to the reply.",
			// Warm renders take milliseconds, cold pulls of big bundles seconds.
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"rpc", "outcome"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricInflight,
			Help: "Requests being served.",
		}),
		cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricCacheHits,
			Help: "Rendered-output cache hits (cache=render), and requests that joined a render already in flight (cache=inflight).",
		}, []string{"cache"}),
		cacheMisses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricCacheMisses,
			Help: "Rendered-output cache misses (a render ran).",
		}, []string{"cache"}),
		renders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRenders,
			Help: "Renders actually executed (after the cache and the in-flight collapsing), by outcome (ok, error).",
		}, []string{"outcome"}),
		resolves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricResolves,
			Help: "Image tag resolutions sent to a registry (concurrent ones for the same reference are collapsed; digest references need none), by outcome (ok, error).",
		}, []string{"outcome"}),
		pulls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricPulls,
			Help: "Bundle and catalog image pulls from a registry (concurrent ones for the same digest are collapsed; images in the on-disk cache are not pulled again), by outcome (ok, error).",
		}, []string{"outcome"}),
		bytesServed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricBytesServed,
			Help: "Bytes of manifests returned, by transport (grpc, http).",
		}, []string{"transport"}),
		bytesReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricBytesReceived,
			Help: "Bytes of repository tarballs received from the repo-server.",
		}),
	}
	m.projects = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricProjects,
		Help: "Render requests under a tenancy policy, by the policy entry covering the project (its name or glob; (unlisted) for projects no entry names; never the project name itself, so the series stay bounded) and outcome (ok, refused: by the tenancy or trust policy, error).",
	}, []string{"entry", "outcome"})
	m.labels = map[string]bool{}
	m.Registry.MustRegister(m.requests, m.duration, m.inflight, m.cacheHits, m.cacheMisses, m.renders,
		m.resolves, m.pulls, m.bytesServed, m.bytesReceived, m.projects,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Start every known series at zero, so dashboards and alerts see them
	// (and rate() works) before the first event.
	m.cacheHits.WithLabelValues("render")
	m.cacheHits.WithLabelValues("inflight")
	m.cacheMisses.WithLabelValues("render")
	for _, o := range []string{"ok", "error"} {
		m.renders.WithLabelValues(o)
		m.resolves.WithLabelValues(o)
		m.pulls.WithLabelValues(o)
	}
	m.bytesServed.WithLabelValues("grpc")
	m.bytesServed.WithLabelValues("http")
	return m
}

// ObserveRequest records one finished request. It is also how the HTTP API
// reports its renders (rpc "http_render").
func (m *Metrics) ObserveRequest(rpc, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(rpc, outcome).Inc()
	m.duration.WithLabelValues(rpc, outcome).Observe(d.Seconds())
}

// ObserveBytesServed counts manifest bytes sent over a transport.
func (m *Metrics) ObserveBytesServed(transport string, n int) {
	if m == nil {
		return
	}
	m.bytesServed.WithLabelValues(transport).Add(float64(n))
}

// InflightAdd moves the in-flight gauge.
func (m *Metrics) InflightAdd(d float64) {
	if m == nil {
		return
	}
	m.inflight.Add(d)
}

func (m *Metrics) cacheHit(cache string) {
	if m != nil {
		m.cacheHits.WithLabelValues(cache).Inc()
	}
}

func (m *Metrics) cacheMiss(cache string) {
	if m != nil {
		m.cacheMisses.WithLabelValues(cache).Inc()
	}
}

func (m *Metrics) render(err error) {
	if m != nil {
		m.renders.WithLabelValues(okOrError(err)).Inc()
	}
}

// Resolved counts a tag resolution sent to a registry; with Pulled, it
// makes Metrics the bundle.RegistryObserver of the image loader.
func (m *Metrics) Resolved(err error) {
	if m != nil {
		m.resolves.WithLabelValues(okOrError(err)).Inc()
	}
}

// Pulled counts an image pull from a registry.
func (m *Metrics) Pulled(err error) {
	if m != nil {
		m.pulls.WithLabelValues(okOrError(err)).Inc()
	}
}

// Received counts bytes of a repository tarball received.
func (m *Metrics) Received(n int) {
	if m != nil {
		m.bytesReceived.Add(float64(n))
	}
}

// project counts one request under a tenancy policy (label is the
// tenant's, "" before a tenant was found).
func (m *Metrics) project(label string, err error) {
	if m == nil {
		return
	}
	if label == "" {
		label = "(unlisted)"
	}
	m.labelsMu.Lock()
	if !m.labels[label] {
		if len(m.labels) >= maxProjectLabels {
			label = "(other)"
		}
		m.labels[label] = true
	}
	m.labelsMu.Unlock()
	outcome := okOrError(err)
	var tr *tenancy.RefusalError
	var vr *verify.RefusalError
	if errors.As(err, &tr) || errors.As(err, &vr) {
		outcome = "refused"
	}
	m.projects.WithLabelValues(label, outcome).Inc()
}

func okOrError(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
