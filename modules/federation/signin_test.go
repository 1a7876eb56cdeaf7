package federation_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/internal/apptest"
)

// A person new to the project signs up with the project's OpenID provider, which vouches
// for their address: a verified user, a linked identity, a session; later they come back
// as the same subject and land on the same user (SPEC §20).
func TestSignUpAndBackWithOIDC(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		p := w.addProvider(t, nil)
		list := w.a.Get("/v1/auth-core/providers?tenantId="+w.project).Expect(t, 200, map[string]any{"tenantId": w.project, "password": true})
		if ps := list["providers"].([]any); len(ps) != 1 || ps[0].(map[string]any)["id"] != p.ID || ps[0].(map[string]any)["name"] != "Acme SSO" {
			t.Fatalf("public list %v", list)
		}
		email := apptest.UniqueEmail(t)
		acc := w.account(t, email, true)

		res := newPerson(t).via(p.Start+"?redirect=/console", acc.Login)
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != w.a.Config.PublicURL+"/console" {
			t.Fatalf("callback: %d %s %s", res.StatusCode, res.Header.Get("Location"), body(t, res))
		}
		access := cookie(res, "sAccessToken")
		me := w.a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+access).Expect(t, 200, nil)
		u := me["user"].(map[string]any)
		if u["email"] != email || u["emailVerified"] != true || me["accessTokenPayload"].(map[string]any)["tid"] != w.project {
			t.Fatalf("session/me %v", me)
		}
		ids := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/identities", Header: bearer(access)}).Expect(t, 200, nil)["identities"].([]any)
		if len(ids) != 1 || ids[0].(map[string]any)["providerId"] != p.ID || ids[0].(map[string]any)["providerName"] != "Acme SSO" {
			t.Fatalf("identities %v", ids)
		}
		userID := me["userId"].(string)
		if n := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("user.identity_link"), auditevent.ActorID(userID)).CountX(t.Context()); n != 1 {
			t.Fatalf("%d identity_link records", n)
		}

		// Back again, in another browser: the same user, no second identity.
		res = newPerson(t).via(p.Start, acc.Login)
		again := cookie(res, "sAccessToken")
		if res.StatusCode != http.StatusFound || again == "" {
			t.Fatalf("second sign-in: %d %s", res.StatusCode, body(t, res))
		}
		me2 := w.a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+again).Expect(t, 200, nil)
		if me2["userId"] != userID {
			t.Fatalf("came back as %v, not %s", me2["userId"], userID)
		}
		if n := w.a.Ent.Identity.Query().Where(identity.UserID(userID)).CountX(t.Context()); n != 1 {
			t.Fatalf("%d identities", n)
		}
		signins := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("user.signin"), auditevent.ActorID(userID)).AllX(t.Context())
		if len(signins) != 2 || signins[0].Metadata["via"] != "provider:"+p.ID || signins[1].Metadata["method"] != "provider" {
			t.Fatalf("signin records %v", signins)
		}
		signups := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("user.signup"), auditevent.ActorID(userID)).AllX(t.Context())
		if len(signups) != 1 || signups[0].Metadata["via"] != "provider:"+p.ID || signups[0].Metadata["method"] != "provider" || signups[0].ProjectID != w.project {
			t.Fatalf("signup records %v", signups)
		}
		// No password is theirs: not even the dummy hash's.
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
			Body: map[string]any{"email": email, "password": "dummy password for timing", "tenantId": w.project}}).Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		if strings.Contains(w.a.Logs.String(), "secret-") {
			t.Fatal("a client secret was logged")
		}
	})
}

// A provider with offline access keeps the upstream's tokens on the identity, sealed
// (SPEC §20, for a later vault): never in clear, never returned.
func TestOfflineTokensSealed(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	p := w.addProvider(t, map[string]any{"offline": true, "scopes": []string{"openid", "email", "profile", "offline_access"}})
	res := newPerson(t).via(p.Start, w.account(t, apptest.UniqueEmail(t), true).Login)
	access := cookie(res, "sAccessToken")
	if access == "" {
		t.Fatalf("%d %s", res.StatusCode, body(t, res))
	}
	row := w.a.Ent.Identity.Query().OnlyX(t.Context())
	if !strings.HasPrefix(row.TokensSealed, "v2.") {
		t.Fatalf("tokens not sealed: %.20q", row.TokensSealed)
	}
	got := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/identities", Header: bearer(access)}).Expect(t, 200, nil)
	if id := got["identities"].([]any)[0].(map[string]any); len(id) != 7 || id["tokens"] != nil || id["tokensSealed"] != nil {
		t.Fatalf("tokens in the identities answer: %v", got)
	}
}
