// Package auditstream sends each project's audit events to its own receivers — an HTTPS
// endpoint, an S3-compatible bucket, a syslog server, an OpenTelemetry collector (SPEC
// §28) — at least once, in chain order, from the project's hash chain itself: a stream is
// a cursor in the chain, so the request path writes nothing for it. Its receivers' own
// protocols live in sink/; this package decides which events, in which order, and what a
// failure does (backoff, pause after a day, a mail to the admins, replay).
//
// Organizations' streams (SPEC §28, /v1/auth-core/orgs/{orgId}/audit-streams) wait for
// organizations.
package auditstream

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	entauditstream "github.com/authcore/authcore/ent/auditstream"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/audit/chainer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

// The secrets a sink needs in clear, sealed to the stream's id.
var (
	sealedSecret   = secret.Declare(secret.Declaration{Name: "audit stream signing secrets", Table: entauditstream.Table, Column: entauditstream.FieldSecretSealed})
	sealedS3Secret = secret.Declare(secret.Declaration{Name: "audit stream S3 secret keys", Table: entauditstream.Table, Column: entauditstream.FieldSecretAccessKeySealed})
)

// Module serves the stream routes and supplies the worker Deliver runs.
var Module = fx.Module("auditstream",
	fx.Supply(DefaultTiming),
	fx.Provide(newParts),
	metrics.AsCollector(func(m *streamMetrics) prometheus.Collector { return m.deliveries }),
	metrics.AsCollector(func(m *streamMetrics) prometheus.Collector { return m.events }),
	metrics.AsCollector(func(c *ent.Client, chain *audit.Recorder, log *slog.Logger) prometheus.Collector {
		return newStateCollector(c, chain, log)
	}),
	secret.AsSealed(sealedSecret, sealedS3Secret),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("auditstream", openapiYAML) }),
	httpserver.AsModuleRoutes("auditstream", func(s *Service, g *guard.Guard) []httpserver.Route { return (&handler{svc: s, guard: g}).routes() }),
)

// Deliver runs the delivery worker, woken by the chainer whenever it linked new events.
// Only a serving process adds it (with the listeners): operator commands send nothing.
var Deliver = fx.Invoke(func(lc fx.Lifecycle, w *worker, c *chainer.Chainer) {
	c.Follow(w.nudge)
	database.RunWoken(lc, w.wake, w.timing.PollEvery, w.pass)
})

type parts struct {
	fx.Out
	Service *Service
	Worker  *worker
	Metrics *streamMetrics
}

type deps struct {
	fx.In
	Ent     *ent.Client
	DB      *database.DB
	Chain   *audit.Recorder
	Clock   clock.Clock
	Keys    *secret.Keyring
	Log     *slog.Logger
	Config  config.Config
	Timing  Timing
	Mail    mail.Sender
	Members identity.Memberships
	People  identity.Directory
}

func newParts(d deps) (parts, error) {
	policy := outbound.Policy{AllowHTTP: d.Config.WebhookAllowHTTP}
	roots, err := outbound.Roots(d.Config.OutboundCAFile)
	if err != nil {
		return parts{}, err
	}
	client := &http.Client{Transport: policy.Transport(d.Timing.RequestTimeout, roots), Timeout: d.Timing.RequestTimeout,
		// A redirect is an answer, not an instruction: it is recorded as a failure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t := newTargets(client, policy, roots, d.Clock)
	m := newStreamMetrics()
	w := &worker{ent: d.Ent, chain: d.Chain, clock: d.Clock, keys: d.Keys, log: d.Log, postgres: d.DB.Storage == config.Postgres,
		timing: d.Timing, targets: t, metrics: m, wake: database.NewWake(),
		paused: &pauseMail{mail: d.Mail, members: d.Members, people: d.People}}
	return parts{
		Service: &Service{ent: d.Ent, keys: d.Keys, policy: policy, chain: d.Chain, clock: d.Clock, targets: t, worker: w},
		Worker:  w,
		Metrics: m,
	}, nil
}
