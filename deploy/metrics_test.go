package deploy

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
)

// metricName finds the metric names in a PromQL expression (ours and the Go, process and
// database/sql collectors').
var metricName = regexp.MustCompile(`\b(?:authcore|go|process)_[a-z0-9_]+\b`)

// exprs returns every PromQL expression of the dashboard and the alert rules.
func exprs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile("grafana/authcore.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			out["dashboard: "+p.Title+" #"+string(rune('A'+i))] = tg.Expr
		}
	}
	b, err = os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out["alert: "+r.Alert] = r.Expr
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d expressions found", len(out))
	}
	return out
}

// Every metric the dashboard and the alerts use exists in a running authcore's /metrics,
// after traffic that touches every kind of metric.
func TestDashboardAndAlertsUseRealMetrics(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite:"+t.TempDir()+"/m.db")
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	tok := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{}, Header: admin.Bearer()}).Expect(t, 200, nil)
	a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+tok["plaintext"].(string)).Expect(t, 200, nil)
	a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer nope").Expect(t, 401, nil)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/projects/" + prj + "/ai/agents/" + tok["agent"].(map[string]any)["id"].(string), Header: admin.Bearer()}).Expect(t, 200, nil)
	a.Get("/readyz").Expect(t, 200, nil)
	a.Get("/no/such/route").Expect(t, 404, nil)
	a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {"dcr_x"}, "refresh_token": {"ac_gr_x"}}, nil).Expect(t, 401, nil)

	families := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(a.Get("/metrics").Body)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			families[f[2]] = true
		}
	}
	exists := func(name string) bool {
		if families[name] {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} { // histogram and summary series
			if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
				return true
			}
		}
		return false
	}
	for where, expr := range exprs(t) {
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("%s uses no metric: %s", where, expr)
		}
		for _, n := range names {
			if !exists(n) {
				t.Errorf("%s uses %s, which /metrics does not have", where, n)
			}
		}
	}
}

// SPEC §7 on the whole app, whose console answers GET /: a request matching no route is
// counted as route="unmatched" for every method, and never under the console's "/".
func TestUnmatchedRequestsOnTheWholeApp(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	a.Get("/no/such/route/123").Expect(t, 404, map[string]any{"code": "not_found"})
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/no/such/route/456", Body: map[string]any{}}).Expect(t, 404, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(a.Base + "/")
	if err != nil || res.StatusCode != 302 {
		t.Fatalf("GET /: %v %v", res, err)
	}
	res.Body.Close()
	metrics := string(a.Get("/metrics").Body)
	for _, want := range []string{
		`authcore_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`authcore_http_requests_total{method="POST",route="unmatched",status="404"} 1`,
		`authcore_http_requests_total{method="GET",route="/",status="302"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in\n%s", want, testkit.GrepLines(metrics, "authcore_http_requests_total"))
		}
	}
}
