package org_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

// A setup link (SPEC §26): created by a project admin for one org and some intents, it
// opens once within five minutes; what it opens is a bearer for that org only, an hour
// long, audited as the link; its secrets are nowhere in the store or the logs.
func TestSetupLinks(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		do := as(a, admin)
		acme := do(http.MethodPost, orgsPath(project), map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
		globex := do(http.MethodPost, orgsPath(project), map[string]any{"name": "Globex"}).Expect(t, 201, nil)["id"].(string)
		links := orgsPath(project) + "/" + acme + "/setup-links"

		made := do(http.MethodPost, links, map[string]any{"intents": []string{"domains", "sso"}}).Expect(t, 201, map[string]any{"orgId": acme})
		url, _ := made["url"].(string)
		_, token, ok := strings.Cut(url, "/console/setup#")
		if !ok || !strings.HasPrefix(token, "ac_stl_") || !strings.HasPrefix(url, a.Base) {
			t.Fatalf("link url %q", url)
		}
		if exp, _ := time.Parse(time.RFC3339, made["expiresAt"].(string)); exp.Sub(a.Clock.Now()) > 5*time.Minute || exp.Sub(a.Clock.Now()) < 4*time.Minute {
			t.Fatalf("the link opens until %v, now %v", exp, a.Clock.Now())
		}

		open := func(tok any) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/setup/open", Body: map[string]any{"token": tok}})
		}
		opened := open(token).Expect(t, 200, map[string]any{"intents": []any{"domains", "sso"}})
		setup := opened["setupToken"].(string)
		if opened["org"].(map[string]any)["id"] != acme || !strings.HasPrefix(setup, "ac_sts_") {
			t.Fatalf("opened %v", opened)
		}
		open(token).Expect(t, 404, map[string]any{"code": "setup_link_invalid"}) // once

		bearer := map[string]string{"Authorization": "Bearer " + setup}
		a.Do(apptest.Req{Path: "/v1/auth-core/orgs/" + acme, Header: bearer}).Expect(t, 200, map[string]any{"id": acme, "name": "Acme"})
		a.Do(apptest.Req{Path: "/v1/auth-core/orgs/" + globex, Header: bearer}).Expect(t, 404, map[string]any{"code": "not_found"})
		a.Do(apptest.Req{Path: "/v1/auth-core/orgs/" + acme, Header: map[string]string{"Authorization": "Bearer " + setup[:len(setup)-1] + "x"}}).Expect(t, 401, nil)

		// What the intents cover, and nothing else: domains and policy here, members never.
		mine := "/v1/auth-core/orgs/" + acme
		a.Do(apptest.Req{Method: http.MethodPost, Path: mine + "/domains", Header: bearer, Body: map[string]any{"domain": "acme-setup.example", "method": "dns"}}).
			Expect(t, 201, map[string]any{"domain": "acme-setup.example", "status": "pending"})
		a.Do(apptest.Req{Path: mine + "/domains", Header: bearer}).Expect(t, 200, nil)
		a.Do(apptest.Req{Path: mine + "/policy", Header: bearer}).Expect(t, 200, map[string]any{"ssoRequired": false})
		a.Do(apptest.Req{Path: "/v1/auth-core/orgs/" + globex + "/domains", Header: bearer}).Expect(t, 404, nil)
		auditOnly := do(http.MethodPost, links, map[string]any{"intents": []string{"audit"}}).Expect(t, 201, nil)["url"].(string)
		_, auditToken, _ := strings.Cut(auditOnly, "#")
		narrow := map[string]string{"Authorization": "Bearer " + open(auditToken).Expect(t, 200, nil)["setupToken"].(string)}
		a.Do(apptest.Req{Path: mine + "/domains", Header: narrow}).Expect(t, 403, nil)
		a.Do(apptest.Req{Path: mine + "/policy", Header: narrow}).Expect(t, 403, nil)
		a.Do(apptest.Req{Path: mine, Header: narrow}).Expect(t, 200, nil)

		trail := do(http.MethodGet, "/v1/projects/"+project+"/audit?limit=50", nil).Expect(t, 200, nil)
		var opens []string
		for _, e := range trail["events"].([]any) {
			ev := e.(map[string]any)
			switch ev["action"] {
			case "org.setup_link_open":
				opens = append(opens, ev["actorId"].(string))
			case "org.domain_add":
				if ev["actorId"] != "setup_link:"+made["id"].(string) {
					t.Fatalf("a domain the setup session claimed is audited as %v", ev["actorId"])
				}
			}
		}
		if len(opens) != 2 || opens[len(opens)-1] != "setup_link:"+made["id"].(string) {
			t.Fatalf("setup link opens audited as %v", opens)
		}
		// Expired before it was opened: the same answer as used.
		late := do(http.MethodPost, links, map[string]any{"intents": []string{"audit"}}).Expect(t, 201, nil)["url"].(string)
		_, lateToken, _ := strings.Cut(late, "#")
		a.Clock.Advance(5*time.Minute + time.Second)
		open(lateToken).Expect(t, 404, map[string]any{"code": "setup_link_invalid"})
		// The session it opened lasts the hour, and not longer.
		a.Do(apptest.Req{Path: "/v1/auth-core/orgs/" + acme, Header: bearer}).Expect(t, 200, nil)
		a.Clock.Advance(55 * time.Minute)
		a.Do(apptest.Req{Path: "/v1/auth-core/orgs/" + acme, Header: bearer}).Expect(t, 401, nil)

		db, logs := a.DumpDB(t), a.Logs.String()
		for _, s := range []string{token, setup, lateToken} {
			if strings.Contains(db, s) || strings.Contains(logs, s) {
				t.Fatal("a setup secret is in the store or the logs")
			}
		}
	})
}

// Every refusal of a setup link's creation and opening is its own case; none writes.
func TestSetupLinkRefusals(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0]) // the handler's rules: one store suffices
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	do := as(a, admin)
	acme := do(http.MethodPost, orgsPath(project), map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	links := orgsPath(project) + "/" + acme + "/setup-links"
	for name, body := range map[string]any{
		"no intents":     map[string]any{},
		"empty":          map[string]any{"intents": []string{}},
		"unknown intent": map[string]any{"intents": []string{"billing"}},
		"twice":          map[string]any{"intents": []string{"sso", "sso"}},
		"not an array":   map[string]any{"intents": "sso"},
		"unknown field":  map[string]any{"intents": []string{"sso"}, "org": acme},
		"not an object":  []string{"sso"},
	} {
		t.Run(name, func(t *testing.T) {
			do(http.MethodPost, links, body).Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
	}
	t.Run("unparsable", func(t *testing.T) {
		a.Do(apptest.Req{Method: http.MethodPost, Path: links, Header: admin.Bearer(), Body: "{"}).Expect(t, 400, nil)
	})
	t.Run("another project's org", func(t *testing.T) {
		other := a.CreateProject(t, admin)
		do(http.MethodPost, orgsPath(other)+"/"+acme+"/setup-links", map[string]any{"intents": []string{"sso"}}).Expect(t, 404, nil)
	})
	t.Run("not an admin of the project", func(t *testing.T) {
		stranger := a.SignUp(t)
		as(a, stranger)(http.MethodPost, links, map[string]any{"intents": []string{"sso"}}).Expect(t, 403, nil)
	})
	t.Run("a tenant user", func(t *testing.T) {
		person := a.SignUpIn(t, project)
		as(a, person)(http.MethodPost, links, map[string]any{"intents": []string{"sso"}}).Expect(t, 401, nil)
	})
	open := func(body any) *apptest.Response {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/setup/open", Body: body})
	}
	open(map[string]any{}).Expect(t, 400, map[string]any{"code": "validation_failed"})
	open(map[string]any{"token": 5}).Expect(t, 400, map[string]any{"code": "validation_failed"})
	open(map[string]any{"token": "ac_stl_nope"}).Expect(t, 404, map[string]any{"code": "setup_link_invalid"})
	if n := a.Ent.OrgSetupLink.Query().CountX(t.Context()); n != 0 {
		t.Fatalf("refused requests wrote %d links", n)
	}
}

// The org admins' guard (SPEC §26): a tenant user who is an owner or admin of the org sees
// it; a plain member is refused; anyone else — not a member, another org's admin, another
// project's user, a dashboard user — learns nothing of it.
func TestOrgAdminGuard(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	do := as(a, admin)
	acme := do(http.MethodPost, orgsPath(project), map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	globex := do(http.MethodPost, orgsPath(project), map[string]any{"name": "Globex"}).Expect(t, 201, nil)["id"].(string)
	person := func(org, role string) *apptest.Session {
		s := a.SignUpIn(t, project)
		do(http.MethodPost, orgsPath(project)+"/"+org+"/members", map[string]any{"userId": s.UserID, "role": role}).Expect(t, 201, nil)
		return s
	}
	read := func(s *apptest.Session, org string) *apptest.Response {
		return as(a, s)(http.MethodGet, "/v1/auth-core/orgs/"+org, nil)
	}
	read(person(acme, "owner"), acme).Expect(t, 200, map[string]any{"id": acme})
	read(person(acme, "admin"), acme).Expect(t, 200, map[string]any{"id": acme})
	read(person(acme, "member"), acme).Expect(t, 403, nil)
	read(person(globex, "admin"), acme).Expect(t, 404, map[string]any{"code": "not_found"})
	read(a.SignUpIn(t, project), acme).Expect(t, 404, map[string]any{"code": "not_found"})
	read(a.SignUpIn(t, a.CreateProject(t, admin)), acme).Expect(t, 404, map[string]any{"code": "not_found"})
	read(admin, acme).Expect(t, 404, map[string]any{"code": "not_found"})
	a.Do(apptest.Req{Path: "/v1/auth-core/orgs/" + acme}).Expect(t, 401, nil)
}
