package usage_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/usage"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

type world struct {
	a       *apptest.App
	rec     *usage.Recorder
	admin   *apptest.Session
	project string
}

func newWorld(t *testing.T, st apptest.Store, opts ...apptest.Option) *world {
	t.Helper()
	w := &world{}
	w.a = apptest.Start(t, st, append(opts, apptest.WithFx(fx.Populate(&w.rec)))...)
	w.admin = w.a.SignUp(t)
	w.project = w.a.CreateProject(t, w.admin)
	return w
}

func (w *world) agent(t *testing.T) (id, secret string) {
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents", Body: map[string]any{"agentName": "bot"}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	return got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)
}

func (w *world) me(token string) *apptest.Response {
	return w.a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+token)
}

func (w *world) usage(t *testing.T, query string) map[string]any {
	t.Helper()
	if err := w.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return w.a.Get("/v1/projects/"+w.project+"/usage?"+query, "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 200, nil)
}

func totals(r map[string]any) map[string]any { return r["totals"].(map[string]any) }

func sum(r map[string]any, kind, outcome string) float64 {
	var n float64
	for _, s := range r["series"].([]any) {
		s := s.(map[string]any)
		if s["kind"] == kind && s["outcome"] == outcome {
			for _, p := range s["points"].([]any) {
				n += p.(map[string]any)["count"].(float64)
			}
		}
	}
	return n
}

// Counts over real HTTP equal the requests made, per credential and outcome; unknown
// tokens count nowhere; the lists carry each credential's last 24 hours.
func TestCountsEqualRequests(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		id, tok := w.agent(t)
		for i := range 5 {
			w.me(tok).Expect(t, 200, nil)
			if i == 2 { // a flush between uses: the next one adds to the row it wrote
				if err := w.rec.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		other, busy := w.agent(t)
		for range 2 {
			w.me(busy).Expect(t, 200, nil)
		}
		badge := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/service-badges", Header: w.admin.Bearer(),
			Body: map[string]any{"name": "d", "product": "db"}}).Expect(t, 201, nil)
		for range 4 {
			w.a.Get("/v1/service-badges/me", "Authorization", "Bearer "+badge["plaintext"].(string)).Expect(t, 200, nil)
		}
		w.me("ac_ai_unknownunknownunknownunknown00").Expect(t, 401, nil)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents/" + id, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		for range 3 {
			w.me(tok).Expect(t, 401, nil)
		}

		got := w.usage(t, "granularity=minute")
		if tt := totals(got); tt["ok"] != 11.0 || tt["denied"] != 3.0 || tt["rateLimited"] != 0.0 {
			t.Fatalf("totals %v", tt)
		}
		if sum(got, "ai_agent", "ok") != 7 || sum(got, "service_badge", "ok") != 4 || sum(got, "ai_agent", "denied") != 3 {
			t.Fatalf("series %v", got["series"])
		}
		one := w.usage(t, "granularity=hour&credentialId="+id)
		if tt := totals(one); tt["ok"] != 5.0 || tt["denied"] != 3.0 {
			t.Fatalf("the revoked token's totals %v", tt)
		}
		agents := w.a.Get("/v1/auth-core/projects/"+w.project+"/ai/agents", "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 200, nil)["agents"].([]any)
		if len(agents) != 1 || agents[0].(map[string]any)["id"] != other {
			t.Fatalf("agents %v", agents)
		}
		if u := agents[0].(map[string]any)["usage24h"].(map[string]any); u["ok"] != 2.0 || u["denied"] != 0.0 {
			t.Fatalf("usage24h %v", u)
		}
		badges := w.a.Get("/v1/projects/"+w.project+"/service-badges", "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 200, nil)["badges"].([]any)
		if u := badges[0].(map[string]any)["usage24h"].(map[string]any); u["ok"] != 4.0 {
			t.Fatalf("badge usage24h %v", u)
		}
		// Another project sees none of it.
		stranger := w.a.SignUp(t)
		theirs := w.a.CreateProject(t, stranger)
		w.a.Get("/v1/projects/"+theirs+"/usage", "Authorization", "Bearer "+stranger.AccessToken).Expect(t, 200,
			map[string]any{"totals": map[string]any{"ok": 0, "denied": 0, "rateLimited": 0}})
		w.a.Get("/v1/projects/"+w.project+"/usage", "Authorization", "Bearer "+stranger.AccessToken).Expect(t, 403, nil)
	})
}

// A known token refused by the caller's failure budget counts as rate_limited; grants
// count under their client.
func TestRateLimitedAndGrants(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.RateLimit = 2 }))
	_, tok := w.agent(t)
	cl := w.a.MintAuthClient(t, w.admin, w.project, nil)
	w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}}, apptest.Basic(cl.ID, cl.Secret)).Expect(t, 200, nil)
	w.me(tok).Expect(t, 200, nil)
	w.me("ac_ai_unknownunknownunknownunknown00").Expect(t, 401, nil)
	w.me("ac_ai_unknownunknownunknownunknown01").Expect(t, 401, nil)
	w.me(tok).Expect(t, 429, nil)
	got := w.usage(t, "")
	if tt := totals(got); tt["ok"] != 2.0 || tt["rateLimited"] != 1.0 {
		t.Fatalf("totals %v", tt)
	}
	if sum(got, "oauth_client", "ok") != 1 || sum(got, "ai_agent", "rate_limited") != 1 {
		t.Fatalf("series %v", got["series"])
	}
}

// Two replicas count into one store, and what a replica counted survives its stop: the
// last flush runs after the server drained.
func TestReplicasAndRestart(t *testing.T) {
	st := apptest.Stores(t)[len(apptest.Stores(t))-1] // PostgreSQL when there is one
	dbURL := st.URL(t)
	w := &world{}
	w.a = apptest.StartURL(t, st.Name, dbURL, apptest.WithFx(fx.Populate(&w.rec)))
	w.admin = w.a.SignUp(t)
	w.project = w.a.CreateProject(t, w.admin)
	_, tok := w.agent(t)
	var otherRec *usage.Recorder
	other := w.a
	if st.Name == "postgres" {
		other = apptest.StartURL(t, st.Name, dbURL, apptest.WithFx(fx.Populate(&otherRec)))
	}
	for range 3 {
		w.me(tok).Expect(t, 200, nil)
		other.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+tok).Expect(t, 200, nil)
	}
	if otherRec != nil {
		if err := other.Stop(); err != nil { // its counts are written as it stops
			t.Fatal(err)
		}
	}
	if tt := totals(w.usage(t, "granularity=minute")); tt["ok"] != 6.0 {
		t.Fatalf("totals across replicas %v", tt)
	}
}

// After 30 days minute counts become day counts: the totals stay.
func TestRollUp(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	_, tok := w.agent(t)
	for range 4 {
		w.me(tok).Expect(t, 200, nil)
	}
	before := totals(w.usage(t, "granularity=day&from="+w.a.Clock.Now().Add(-48*time.Hour).Format(time.RFC3339)))
	from := w.a.Clock.Now().Add(-time.Hour).Format(time.RFC3339)
	w.a.Clock.Advance(32 * 24 * time.Hour)
	defer w.a.Clock.Advance(-32 * 24 * time.Hour)
	n, err := w.rec.RollUp(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("rolled up %d rows: %v", n, err)
	}
	// The admin's session ran out meanwhile: sign in again.
	w.admin.AccessToken = w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
		Body: map[string]any{"email": w.admin.Email, "password": w.admin.Password}}).Expect(t, 200, nil)["session"].(map[string]any)["accessToken"].(string)
	after := totals(w.usage(t, "granularity=day&from="+from))
	if before["ok"] != 4.0 || after["ok"] != 4.0 {
		t.Fatalf("before %v, after %v", before, after)
	}
	if tt := totals(w.usage(t, "granularity=minute")); tt["ok"] != 0.0 {
		t.Fatalf("minute counts left after the roll-up: %v", tt)
	}
}

// Each query rule, with its own case; nothing is changed by a bad one.
func TestUsageQueryRules(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	get := func(q string) *apptest.Response {
		return w.a.Get("/v1/projects/"+w.project+"/usage?"+q, "Authorization", "Bearer "+w.admin.AccessToken)
	}
	for name, q := range map[string]string{
		"an unknown granularity":      "granularity=week",
		"a time that is not RFC 3339": "from=yesterday",
		"from after to":               "from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z",
		"26 hours by minute":          "granularity=minute&from=2026-01-01T00:00:00Z&to=2026-01-02T02:00:00Z",
		"63 days by hour":             "granularity=hour&from=2026-01-01T00:00:00Z&to=2026-03-05T00:00:00Z",
	} {
		t.Run(name, func(t *testing.T) { get(q).Expect(t, 400, map[string]any{"code": "validation_failed"}) })
	}
	t.Run("24 hours by minute", func(t *testing.T) {
		get("granularity=minute&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z").Expect(t, 200, map[string]any{"granularity": "minute"})
	})
	t.Run("a year by day", func(t *testing.T) {
		get("granularity=day&from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z").Expect(t, 200, nil)
	})
}
