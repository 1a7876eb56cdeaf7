package auditstream

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
)

// streamMetrics count what the worker sends, by stream type (never a stream's id: the
// labels stay bounded).
type streamMetrics struct {
	// deliveries counts batches by outcome: authcore_audit_stream_deliveries_total{type,result}.
	deliveries *prometheus.CounterVec
	// events counts events receivers took: authcore_audit_stream_events_total{type}.
	events *prometheus.CounterVec
}

func newStreamMetrics() *streamMetrics {
	m := &streamMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "authcore_audit_stream_deliveries_total",
			Help: "Batches of audit events sent to streams' receivers, by stream type and outcome (succeeded, failed).",
		}, []string{"type", "result"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "authcore_audit_stream_events_total",
			Help: "Audit events streams' receivers took, by stream type.",
		}, []string{"type"}),
	}
	// Every series is there from the start, at 0, so rates and alerts see it.
	for _, t := range types {
		m.events.WithLabelValues(t)
		for _, r := range []string{"succeeded", "failed"} {
			m.deliveries.WithLabelValues(t, r)
		}
	}
	return m
}

// stateCollector reports, at each scrape, the largest lag among the streams of each type
// (events chained and not yet delivered) and how many are paused. It reads the store at
// scrape time: every replica reports the same, current values, and nothing is kept
// between scrapes.
type stateCollector struct {
	ent    *ent.Client
	chain  *audit.Recorder
	log    *slog.Logger
	lag    *prometheus.Desc
	paused *prometheus.Desc
}

func newStateCollector(c *ent.Client, chain *audit.Recorder, log *slog.Logger) *stateCollector {
	return &stateCollector{ent: c, chain: chain, log: log,
		lag: prometheus.NewDesc("authcore_audit_stream_lag_events",
			"The largest lag among the audit streams of a type: events of the project's chain not yet delivered.", []string{"type"}, nil),
		paused: prometheus.NewDesc("authcore_audit_stream_paused",
			"Audit streams of a type paused after 24 h of failure, until resumed or replayed.", []string{"type"}, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.lag; ch <- c.paused }

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(database.Background(context.Background()), 2*time.Second)
	defer cancel()
	lag, paused, err := c.state(ctx)
	if err != nil {
		c.log.Warn("reading audit streams for metrics", "err", err)
		return
	}
	for _, t := range types {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(lag[t]), t)
		ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, float64(paused[t]), t)
	}
}

func (c *stateCollector) state(ctx context.Context) (lag, paused map[string]int64, err error) {
	sts, err := c.ent.AuditStream.Query().All(ctx)
	if err != nil {
		return nil, nil, err
	}
	lag, paused = map[string]int64{}, map[string]int64{}
	heads := map[string]int64{}
	for _, st := range sts {
		head, ok := heads[st.ProjectID]
		if !ok {
			if head, err = c.chain.ChainHead(ctx, st.ProjectID); err != nil {
				return nil, nil, err
			}
			heads[st.ProjectID] = head
		}
		t := st.Type.String()
		lag[t] = max(lag[t], head-st.Cursor)
		if st.PausedAt != nil {
			paused[t]++
		}
	}
	return lag, paused, nil
}
