package agenttoken_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
)

// orgWorld is a project with orgs A and B, A's owner and plain member and B's owner (users
// of the project's tenant), and a resource server's client to introspect with.
type orgWorld struct {
	a                      *apptest.App
	admin                  *apptest.Session
	project, orgA, orgB    string
	ownerA, plainA, ownerB *apptest.Session
	rsID, rsSecret         string
}

func newOrgWorld(t *testing.T, st apptest.Store, opts ...apptest.Option) *orgWorld {
	t.Helper()
	a := apptest.Start(t, st, opts...)
	w := &orgWorld{a: a, admin: a.SignUp(t)}
	w.project = a.CreateProject(t, w.admin)
	orgs := "/v1/projects/" + w.project + "/orgs"
	w.orgA = w.do(w.admin, http.MethodPost, orgs, map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	w.orgB = w.do(w.admin, http.MethodPost, orgs, map[string]any{"name": "Globex"}).Expect(t, 201, nil)["id"].(string)
	w.ownerA, w.plainA, w.ownerB = a.SignUpIn(t, w.project), a.SignUpIn(t, w.project), a.SignUpIn(t, w.project)
	for _, m := range []struct {
		org  string
		who  *apptest.Session
		role string
	}{{w.orgA, w.ownerA, "owner"}, {w.orgA, w.plainA, "member"}, {w.orgB, w.ownerB, "owner"}} {
		w.do(w.admin, http.MethodPost, orgs+"/"+m.org+"/members", map[string]any{"userId": m.who.UserID, "role": m.role}).Expect(t, 201, nil)
	}
	rs := a.MintAuthClient(t, w.admin, w.project, nil)
	w.rsID, w.rsSecret = rs.ID, rs.Secret
	return w
}

func (w *orgWorld) do(who *apptest.Session, method, path string, body any) *apptest.Response {
	var h map[string]string
	if who != nil {
		h = who.Bearer()
	}
	return w.a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: h})
}

func orgAgents(org string) string { return "/v1/auth-core/orgs/" + org + "/ai/agents" }

func (w *orgWorld) projectAgents() string {
	return "/v1/auth-core/projects/" + w.project + "/ai/agents"
}

func (w *orgWorld) me(t *testing.T, token string) map[string]any {
	t.Helper()
	return w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/ai/me", Header: map[string]string{"Authorization": "Bearer " + token}}).Expect(t, 200, nil)
}

func (w *orgWorld) introspect(t *testing.T, token string) map[string]any {
	t.Helper()
	h := apptest.Basic(w.rsID, w.rsSecret)
	h["Content-Type"] = "application/x-www-form-urlencoded"
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/introspect", Body: url.Values{"token": {token}}.Encode(), Header: h}).Expect(t, 200, nil)
}

// exchanged is the claims of the JWT an agent token is exchanged for (RFC 8693).
func (w *orgWorld) exchanged(t *testing.T, token string) map[string]any {
	t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {token},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}
	jwt := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)["access_token"].(string)
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(jwt, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A project admin binds a token to an org of the project (orgId); its ai/me, its
// introspection and the JWTs exchanged for it carry the org, while an unbound token's
// answers stay exactly the seed's.
func TestOrgBoundTokens(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		bound := w.do(w.admin, http.MethodPost, w.projectAgents(), map[string]any{"agentName": "billing-bot", "orgId": w.orgA}).Expect(t, 200, nil)
		if got := bound["agent"].(map[string]any)["orgId"]; got != w.orgA {
			t.Errorf("minted agent's orgId %v", got)
		}
		tok := bound["plaintext"].(string)
		if me := w.me(t, tok); me["orgId"] != w.orgA || me["agentName"] != "billing-bot" || me["projectId"] != w.project {
			t.Errorf("ai/me: %v", me)
		}
		if in := w.introspect(t, tok); in["org_id"] != w.orgA || in["active"] != true {
			t.Errorf("introspection: %v", in)
		}
		if claims := w.exchanged(t, tok); claims["org_id"] != w.orgA {
			t.Errorf("exchanged claims: %v", claims)
		}

		plain := w.do(w.admin, http.MethodPost, w.projectAgents(), map[string]any{}).Expect(t, 200, nil)["plaintext"].(string)
		want := []string{"agentName", "authenticated", "createdBy", "engine", "expiresAt", "kind", "projectId", "scopes", "tokenId"}
		if got := keys(w.me(t, plain)); !slices.Equal(got, want) {
			t.Errorf("an unbound token's ai/me has %v, want the seed's %v", got, want)
		}
		if _, ok := w.introspect(t, plain)["org_id"]; ok {
			t.Error("an unbound token's introspection names an org")
		}
		if _, ok := w.exchanged(t, plain)["org_id"]; ok {
			t.Error("an unbound token's exchanged JWT names an org")
		}

		// Being bound costs no store read: warm, each answer of a bound token reads the
		// store as often as an unbound one's (org_id rides in the cached row).
		queries := func(tok string) int64 {
			w.me(t, tok)
			w.introspect(t, tok)
			before := w.a.DB.Queries()
			for range 5 {
				w.me(t, tok)
				w.introspect(t, tok)
			}
			return w.a.DB.Queries() - before
		}
		if b, u := queries(tok), queries(plain); b != u {
			t.Errorf("a bound token's warm answers read the store %d times, an unbound one's %d", b, u)
		}

		// orgId must name an org of this project.
		other := w.a.SignUp(t)
		otherProject := w.a.CreateProject(t, other)
		foreign := w.do(other, http.MethodPost, "/v1/projects/"+otherProject+"/orgs", map[string]any{"name": "Elsewhere"}).Expect(t, 201, nil)["id"].(string)
		for _, org := range []any{foreign, "org_nope", "tok_x", 7} {
			w.do(w.admin, http.MethodPost, w.projectAgents(), map[string]any{"orgId": org}).Expect(t, 400, map[string]any{"code": "create_failed", "engine": "authcore"})
		}
	})
}

// An org's admins mint, list and revoke that org's tokens only, with the seed's bodies.
func TestOrgAdminsAgentTokens(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		minted := w.do(w.ownerA, http.MethodPost, orgAgents(w.orgA), map[string]any{"agentName": "acme-bot", "scopes": []string{"tickets:read"}}).
			Expect(t, 200, map[string]any{"engine": "authcore", "projectId": w.project})
		agent := minted["agent"].(map[string]any)
		if agent["orgId"] != w.orgA || agent["createdBy"] != w.ownerA.UserID {
			t.Fatalf("minted: %v", agent)
		}
		if me := w.me(t, minted["plaintext"].(string)); me["orgId"] != w.orgA {
			t.Errorf("ai/me: %v", me)
		}
		// Tokens of B and unbound ones exist beside it.
		tokB := w.do(w.ownerB, http.MethodPost, orgAgents(w.orgB), map[string]any{}).Expect(t, 200, nil)["agent"].(map[string]any)["id"].(string)
		w.do(w.admin, http.MethodPost, w.projectAgents(), map[string]any{}).Expect(t, 200, nil)

		list := w.do(w.ownerA, http.MethodGet, orgAgents(w.orgA), nil).Expect(t, 200, map[string]any{"engine": "authcore", "orgId": w.orgA})["agents"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["id"] != agent["id"] {
			t.Fatalf("A's tokens: %v", list)
		}
		if all := w.do(w.admin, http.MethodGet, w.projectAgents(), nil).Expect(t, 200, nil)["agents"].([]any); len(all) != 3 {
			t.Errorf("the project admin sees %d tokens, want 3", len(all))
		}

		t.Run("another org's token through one's own org is not found", func(t *testing.T) {
			w.do(w.ownerA, http.MethodDelete, orgAgents(w.orgA)+"/"+tokB, nil).Expect(t, 404, map[string]any{"code": "revoke_failed"})
		})
		t.Run("another org's routes are not found", func(t *testing.T) {
			w.do(w.ownerA, http.MethodGet, orgAgents(w.orgB), nil).Expect(t, 404, map[string]any{"code": "not_found"})
			w.do(w.ownerA, http.MethodPost, orgAgents(w.orgB), map[string]any{}).Expect(t, 404, map[string]any{"code": "not_found"})
			w.do(w.ownerA, http.MethodDelete, orgAgents(w.orgB)+"/"+tokB, nil).Expect(t, 404, map[string]any{"code": "not_found"})
		})
		t.Run("a plain member administers nothing", func(t *testing.T) {
			w.do(w.plainA, http.MethodGet, orgAgents(w.orgA), nil).Expect(t, 403, nil)
			w.do(w.plainA, http.MethodPost, orgAgents(w.orgA), map[string]any{}).Expect(t, 403, nil)
			w.do(w.plainA, http.MethodDelete, orgAgents(w.orgA)+"/"+agent["id"].(string), nil).Expect(t, 403, nil)
		})
		t.Run("a dashboard session is no org admin", func(t *testing.T) {
			w.do(w.admin, http.MethodGet, orgAgents(w.orgA), nil).Expect(t, 404, map[string]any{"code": "not_found"})
			w.do(nil, http.MethodGet, orgAgents(w.orgA), nil).Expect(t, 401, nil)
		})
		t.Run("another org's id in the body", func(t *testing.T) {
			w.do(w.ownerA, http.MethodPost, orgAgents(w.orgA), map[string]any{"orgId": w.orgB}).Expect(t, 400, map[string]any{"code": "create_failed"})
		})
		if n := len(w.do(w.ownerB, http.MethodGet, orgAgents(w.orgB), nil).Expect(t, 200, nil)["agents"].([]any)); n != 1 {
			t.Errorf("B has %d tokens after refusals, want 1", n)
		}

		w.do(w.ownerA, http.MethodDelete, orgAgents(w.orgA)+"/"+agent["id"].(string), nil).
			Expect(t, 200, map[string]any{"engine": "authcore", "ok": true, "tokenId": agent["id"]})
		w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/ai/me", Header: map[string]string{"Authorization": "Bearer " + minted["plaintext"].(string)}}).Expect(t, 401, nil)
		w.do(w.ownerA, http.MethodDelete, orgAgents(w.orgA)+"/"+agent["id"].(string), nil).Expect(t, 404, map[string]any{"code": "revoke_failed"})

		// The org's trail has its tokens' records, and only theirs.
		for action, want := range map[string]int{"ai_token.create": 1, "ai_token.revoke": 1} {
			evs := w.a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(w.project), auditevent.Action(action), auditevent.OrgID(w.orgA)).AllX(t.Context())
			if len(evs) != want || evs[0].Metadata["tokenId"] != agent["id"] || *evs[0].ActorID != w.ownerA.UserID {
				t.Errorf("%s records of org A: %v", action, evs)
			}
		}
		if n := w.a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(w.project), auditevent.Action("ai_token.create"), auditevent.OrgIDIsNil()).CountX(t.Context()); n != 1 {
			t.Errorf("%d records of unbound tokens' creation, want 1", n)
		}
	})
}
