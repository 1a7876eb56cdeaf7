// Package metrics owns the process's one Prometheus registry (never the global default)
// and the HTTP metrics every route is measured by. Modules contribute their own collectors
// through AsCollector; labels stay bounded (never an id, email, token or raw path).
package metrics

import (
	"fmt"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/fx"
)

// Module provides the registry, the HTTP metrics and the credential counters, and
// registers every contributed collector.
var Module = fx.Module("metrics",
	fx.Provide(
		NewRegistry,
		fx.Annotate(func(r *prometheus.Registry) prometheus.Registerer { return r }),
		fx.Annotate(func(r *prometheus.Registry) prometheus.Gatherer { return r }),
		NewHTTP,
		NewCredentials,
	),
	fx.Invoke(registerContributed),
)

// AsCollector contributes a collector to the registry. It is the only place that spells
// the group tag.
func AsCollector(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"collectors"`)))
}

// NewRegistry returns a registry with the Go runtime and process collectors.
func NewRegistry() (*prometheus.Registry, error) {
	r := prometheus.NewRegistry()
	return r, register(r, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// register registers every collector, stopping at the first error.
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

type contributed struct {
	fx.In
	Registry   *prometheus.Registry
	Collectors []prometheus.Collector `group:"collectors"`
}

func registerContributed(in contributed) error {
	// Group members arrive in random order; register in a stable one so an error names
	// the same collector every run.
	cs := append([]prometheus.Collector(nil), in.Collectors...)
	sort.SliceStable(cs, func(i, j int) bool { return fmt.Sprintf("%T", cs[i]) < fmt.Sprintf("%T", cs[j]) })
	for _, c := range cs {
		if err := in.Registry.Register(c); err != nil {
			return fmt.Errorf("registering %T: %w", c, err)
		}
	}
	return nil
}

// HTTP holds the request metrics of SPEC §7.
type HTTP struct {
	Requests *prometheus.CounterVec
	Duration *prometheus.HistogramVec
}

// NewHTTP builds and registers the HTTP metrics.
func NewHTTP(reg prometheus.Registerer) (*HTTP, error) {
	m := &HTTP{
		Requests: counter("authcore_http_requests_total", "HTTP requests by method, route template and status.", "method", "route", "status"),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "authcore_http_request_duration_seconds",
			Help:    "HTTP request latency by method and route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route"}),
	}
	return m, register(reg, m.Requests, m.Duration)
}

// Credentials counts credential issuance, revocation and verification (SPEC §7), and
// how the caches of verified credentials fare (SPEC §24: what AUTHCORE_CACHE_SIZE is sized by).
type Credentials struct {
	Issued        *prometheus.CounterVec
	Revoked       *prometheus.CounterVec
	Verifications *prometheus.CounterVec
	// CacheMisses counts verifications the cache could not answer (a store lookup each).
	CacheMisses *prometheus.CounterVec
	caches      *cacheEntries
}

// NewCredentials builds and registers the credential counters.
func NewCredentials(reg prometheus.Registerer) (*Credentials, error) {
	m := &Credentials{
		Issued:        counter("authcore_credentials_issued_total", "Credentials issued, by kind and product.", "kind", "product"),
		Revoked:       counter("authcore_credentials_revoked_total", "Credentials revoked, by kind and product.", "kind", "product"),
		Verifications: counter("authcore_verifications_total", "Credential verifications, by kind and result.", "kind", "result"),
		CacheMisses: counter("authcore_credential_cache_misses_total",
			"Verifications of bearer credentials that missed the cache of verified credentials and read the store, by kind.", "kind"),
		caches: &cacheEntries{desc: prometheus.NewDesc("authcore_credential_cache_entries",
			"Verified credentials cached, by kind (at most AUTHCORE_CACHE_SIZE each).", []string{"kind"}, nil), sizes: map[string]func() int{}},
	}
	return m, register(reg, m.Issued, m.Revoked, m.Verifications, m.CacheMisses, m.caches)
}

// WatchCache exports how many entries kind's cache holds, read at each scrape.
func (m *Credentials) WatchCache(kind string, entries func() int) {
	m.caches.mu.Lock()
	m.caches.sizes[kind] = entries
	m.caches.mu.Unlock()
}

// cacheEntries is the authcore_credential_cache_entries gauge: one reading per kind.
type cacheEntries struct {
	desc  *prometheus.Desc
	mu    sync.Mutex
	sizes map[string]func() int
}

func (c *cacheEntries) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *cacheEntries) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for kind, n := range c.sizes {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n()), kind)
	}
}

// counter is a counter vector; register it before use.
func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}
