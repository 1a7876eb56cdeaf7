package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/usage"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/lifecycle"
)

// citizen is an app running with a kind made by lifecycle.Module, and what the checks need.
type citizen struct {
	a       *apptest.App
	scanner *apptest.Scanner
	kinds   *credential.Registry
	usage   *usage.Recorder
	screen  lifecycle.Screen
	prefix  string // ac_<x>_
}

// checkCitizen holds a kind made by lifecycle.Module to everything SPEC §12, §15 and §19
// promise a credential, over HTTP, with the ugly input of SPEC §6: what "a full citizen"
// means in docs/extending.md.
func checkCitizen(t *testing.T, c citizen) {
	a, s := c.a, c.screen
	admin, dev, outsider := a.SignUp(t), a.SignUp(t), a.SignUp(t)
	prj, other := a.CreateProject(t, admin), a.CreateProject(t, outsider)
	a.AddMember(t, admin, prj, dev, "developer")
	rs := a.MintAuthClient(t, admin, prj, nil) // a resource server, to introspect with
	base := func(p string) string { return strings.Replace(s.Collection, "{id}", p, 1) }
	body := func(extra map[string]any) map[string]any {
		b := map[string]any{}
		for _, f := range s.Fields {
			if f.Required && f.Type == "string" {
				b[f.Name] = "ci-" + f.Name
			}
		}
		if s.ExpiresRequired {
			b["expiresInDays"] = 30
		}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	mintAs := func(as *apptest.Session, p string, b any) *apptest.Response {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: base(p), Body: b, Header: as.Bearer()})
	}
	mint := func(extra map[string]any) (secret, id string) {
		got := mintAs(admin, prj, body(extra)).Expect(t, 201, nil)
		return got["plaintext"].(string), got["credential"].(map[string]any)["id"].(string)
	}
	list := func() []any {
		return a.Do(apptest.Req{Path: base(prj), Header: admin.Bearer()}).Expect(t, 200, nil)["credentials"].([]any)
	}
	me := func(secret string) *apptest.Response { return a.Get(s.Me, "Authorization", "Bearer "+secret) }
	introspect := func(secret string) *apptest.Response {
		return a.PostForm("/v1/oauth/introspect", url.Values{"token": {secret}}, apptest.Basic(rs.ID, rs.Secret))
	}
	// later moves the clock on, and signs the admin in again: the session's access token
	// and its recent authentication (SPEC §17) do not last that long.
	later := func(d time.Duration) {
		a.Clock.Advance(d)
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": admin.Email, "password": admin.Password}}).Expect(t, 200, nil)
		admin.AccessToken = got["session"].(map[string]any)["accessToken"].(string)
	}
	live := func(t *testing.T, secret string, want bool) {
		t.Helper()
		status, active := 401, false
		if want {
			status, active = 200, true
		}
		me(secret).Expect(t, status, nil)
		introspect(secret).Expect(t, 200, map[string]any{"active": active})
	}

	secret, id := mint(nil)
	t.Run("mint answers the record and the secret once", func(t *testing.T) {
		if !strings.HasPrefix(secret, c.prefix) {
			t.Fatalf("secret %q, want prefix %s", secret, c.prefix)
		}
		l := list()
		if len(l) != 1 || l[0].(map[string]any)["id"] != id || !strings.HasPrefix(l[0].(map[string]any)[s.Hint].(string), c.prefix) {
			t.Fatalf("list %v", l)
		}
		if raw := string(a.Do(apptest.Req{Path: base(prj), Header: admin.Bearer()}).Body); strings.Contains(raw, secret) || strings.Contains(raw, "digest") {
			t.Fatal("the list shows a secret")
		}
	})
	t.Run("bad input is a 400 that writes nothing", func(t *testing.T) {
		bad := []any{nil, "[]", `"x"`, body(map[string]any{"expiresInDays": 0}), body(map[string]any{"expiresInDays": 366}),
			body(map[string]any{"expiresInDays": 1.5}), body(map[string]any{"expiresInDays": "30"})}
		for _, f := range s.Fields {
			if f.Required {
				b := body(nil)
				delete(b, f.Name)
				bad = append(bad, b, body(map[string]any{f.Name: 12}), body(map[string]any{f.Name: nil}))
			}
			if f.Type == "string" {
				bad = append(bad, body(map[string]any{f.Name: "a\tb"}), body(map[string]any{f.Name: strings.Repeat("x", 1000)}))
			}
		}
		for _, b := range bad {
			mintAs(admin, prj, b).Expect(t, 400, map[string]any{"code": "validation_failed"})
		}
		if n := len(list()); n != 1 {
			t.Fatalf("%d credentials after refused mints", n)
		}
		ok := body(map[string]any{"expiresInDays": 365}) // the boundary itself is fine
		_, id := mint(ok)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: base(prj) + "/" + id, Header: admin.Bearer()}).Expect(t, 200, nil)
	})
	t.Run("only the project's admins manage it", func(t *testing.T) {
		mintAs(dev, prj, body(nil)).Expect(t, 403, nil)
		a.Do(apptest.Req{Path: base(prj), Header: dev.Bearer()}).Expect(t, 403, nil)
		a.Do(apptest.Req{Path: base(prj)}).Expect(t, 401, nil)
		mintAs(outsider, prj, body(nil)).Expect(t, 403, nil)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: base(other) + "/" + id, Header: outsider.Bearer()}).Expect(t, 404, nil)
	})
	t.Run("who am I", func(t *testing.T) {
		me(secret).Expect(t, 200, map[string]any{"authenticated": true, "kind": s.Kind, "id": id, "projectId": prj})
		tampered := secret[:len(secret)-1] + "0"
		if tampered == secret { // one secret in 62 ends in 0
			tampered = secret[:len(secret)-1] + "1"
		}
		for _, h := range []string{"", "Bearer", "Bearer " + tampered, "Bearer " + c.prefix + strings.Repeat("A", 38)} {
			a.Get(s.Me, "Authorization", h).Expect(t, 401, nil)
		}
	})
	t.Run("introspection names it", func(t *testing.T) {
		introspect(secret).Expect(t, 200, map[string]any{"active": true, "kind": s.Kind, "sub": id, "project_id": prj})
	})
	t.Run("its verifications are counted", func(t *testing.T) {
		if err := c.usage.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := a.Get("/v1/projects/"+prj+"/usage?kind="+s.Kind+"&credentialId="+id, "Authorization", "Bearer "+admin.AccessToken).Expect(t, 200, nil)
		if ok := got["totals"].(map[string]any)["ok"].(float64); ok < 2 {
			t.Fatalf("ok %v, want at least the me and the introspection above", ok)
		}
		if u := list()[0].(map[string]any)["usage24h"].(map[string]any); u["ok"].(float64) < 2 {
			t.Fatalf("usage24h %v", u)
		}
	})
	t.Run("roll: a new secret, the old one until its grace ends", func(t *testing.T) {
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: base(prj) + "/" + id + "/roll", Body: map[string]any{"graceHours": 1}, Header: admin.Bearer()}).Expect(t, 200, nil)
		rolled := got["plaintext"].(string)
		if rolled == secret || got["credential"].(map[string]any)["id"] != id || got["previousSecretExpiresAt"] == nil {
			t.Fatalf("%v", got)
		}
		live(t, secret, true)
		live(t, rolled, true)
		for _, b := range []any{"[]", map[string]any{"graceHours": -1}, map[string]any{"graceHours": 169}, map[string]any{"graceHours": "1"}} {
			a.Do(apptest.Req{Method: http.MethodPost, Path: base(prj) + "/" + id + "/roll", Body: b, Header: admin.Bearer()}).Expect(t, 400, nil)
		}
		later(time.Hour + time.Second)
		live(t, secret, false)
		live(t, rolled, true)
		secret = rolled
	})
	t.Run("its events are recorded and may be subscribed to", func(t *testing.T) {
		events := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit", Header: admin.Bearer()}).Expect(t, 200, nil)["events"].([]any)
		var actions []string
		for _, e := range events {
			actions = append(actions, e.(map[string]any)["action"].(string))
		}
		for _, want := range []string{s.Kind + ".create", s.Kind + ".roll", s.Kind + ".revoke"} {
			if !slices.Contains(actions, want) {
				t.Errorf("no %s in the audit trail %v", want, actions)
			}
			if !slices.Contains(c.kinds.Events(), want) {
				t.Errorf("%s is not a webhook event type", want)
			}
		}
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/webhooks",
			Body: map[string]any{"url": "https://93.184.215.14/hook", "events": []string{s.Kind + ".revoke"}}, Header: admin.Bearer()}).Expect(t, 201, nil)
	})
	t.Run("the API document describes it", func(t *testing.T) {
		doc, _ := a.Served(t)
		if !slices.Contains(doc.Components.Schemas["CredentialKind"].Value.Enum, any(s.Kind)) ||
			!slices.Contains(doc.Components.Schemas["EventType"].Value.Enum, any(s.Kind+".roll")) {
			t.Fatalf("%s is not in the served document's enums", s.Kind)
		}
		if doc.Paths.Find(s.Collection) == nil || doc.Paths.Find(s.Me) == nil {
			t.Fatalf("the served document lacks %s or %s", s.Collection, s.Me)
		}
	})
	t.Run("the console lists its screen", func(t *testing.T) {
		got := a.Do(apptest.Req{Path: "/v1/console/screens", Header: admin.Bearer()}).Expect(t, 200, nil)["screens"].([]any)
		if !slices.ContainsFunc(got, func(x any) bool { return x.(map[string]any)["kind"] == s.Kind }) {
			t.Fatalf("%v", got)
		}
		a.Get("/v1/console/screens").Expect(t, 401, nil)
	})
	t.Run("the secret-scanning pattern finds it", func(t *testing.T) {
		if !c.kinds.Pattern().MatchString("leaked: " + secret + "\n") {
			t.Fatalf("%s does not match %s", secret, c.kinds.ScanPattern())
		}
	})
	t.Run("an admin revokes it", func(t *testing.T) {
		doomed, doomedID := mint(nil)
		live(t, doomed, true)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: base(prj) + "/" + doomedID, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true, "id": doomedID})
		live(t, doomed, false)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: base(prj) + "/" + doomedID, Header: admin.Bearer()}).Expect(t, 404, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: base(prj) + "/" + doomedID + "/roll", Header: admin.Bearer()}).Expect(t, 404, nil)
	})
	t.Run("a signed leak report revokes it", func(t *testing.T) {
		leaked, _ := mint(nil)
		got := c.scanner.Report(t, a, leaked, c.prefix+strings.Repeat("A", 38))
		if !strings.Contains(string(got.Body), `"label":"true_positive"`) || !strings.Contains(string(got.Body), `"label":"false_positive"`) {
			t.Fatalf("%s", got.Body)
		}
		live(t, leaked, false)
	})
	t.Run("RFC 7009 revokes it", func(t *testing.T) {
		held, _ := mint(nil)
		a.PostForm("/v1/oauth/revoke", url.Values{"token": {held}}, nil).Expect(t, 200, map[string]any{})
		live(t, held, false)
	})
	t.Run("it expires", func(t *testing.T) {
		short, _ := mint(map[string]any{"expiresInDays": 1})
		live(t, short, true)
		later(24*time.Hour + time.Second)
		live(t, short, false)
		live(t, secret, true) // minted without expiresInDays (never) or with 30 days
	})
	t.Run("metrics count it", func(t *testing.T) {
		series := fmt.Sprintf(`authcore_credentials_issued_total{kind=%q,product=""}`, s.Kind)
		if metric(t, a, series) < 5 {
			t.Fatalf("%s < 5", series)
		}
	})
}
