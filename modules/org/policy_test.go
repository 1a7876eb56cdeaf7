package org_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/identity"
)

func policy(sso, mfa bool, hours any, autoJoin any, revoke bool) map[string]any {
	p := map[string]any{"ssoRequired": sso, "mfaRequired": mfa, "sessionMaxHours": hours, "revokeMintedOnDeprovision": revoke}
	if autoJoin != nil {
		p["autoJoin"] = autoJoin
	}
	return p
}

// An org's policy is every rule off until put; a PUT replaces it whole, and its autoJoin
// role holds that role as a membership does.
func TestPolicy(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		acme := w.org(t, w.project, "Acme")
		path := orgsPath(w.project) + "/" + acme + "/policy"
		w.do(http.MethodGet, path, nil).Expect(t, 200, map[string]any{"ssoRequired": false, "mfaRequired": false, "sessionMaxHours": float64(0),
			"autoJoin": nil, "revokeMintedOnDeprovision": false})
		w.do(http.MethodPut, rolesPath(w.project), []any{map[string]any{"name": "engineer", "permissions": []string{"repo:read"}}}).Expect(t, 200, nil)
		want := map[string]any{"ssoRequired": true, "mfaRequired": true, "sessionMaxHours": float64(720),
			"autoJoin": map[string]any{"role": "engineer"}, "revokeMintedOnDeprovision": true}
		w.do(http.MethodPut, path, policy(true, true, 720, map[string]any{"role": "engineer"}, true)).Expect(t, 200, want)
		w.do(http.MethodGet, path, nil).Expect(t, 200, want)

		// The project cannot remove a role an org's autoJoin gives.
		w.do(http.MethodPut, rolesPath(w.project), []any{}).Expect(t, 409, map[string]any{"code": "role_in_use"})

		// The boundaries that pass, each replacing the whole policy.
		for _, hours := range []int{0, 1, 720} {
			w.do(http.MethodPut, path, policy(false, true, hours, nil, false)).Expect(t, 200, map[string]any{"sessionMaxHours": float64(hours), "autoJoin": nil, "ssoRequired": false})
		}
		w.do(http.MethodPut, path, policy(false, false, 0, nil, false)).Expect(t, 200, nil)
		w.do(http.MethodPut, rolesPath(w.project), []any{}).Expect(t, 200, nil)
		w.do(http.MethodPut, path, policy(false, false, 24, map[string]any{"role": "member"}, false)).Expect(t, 200, map[string]any{"autoJoin": map[string]any{"role": "member"}})

		if !strings.Contains(auditActions(t, w.a, w.admin, w.project), "org.policy_put") {
			t.Errorf("no org.policy_put in the audit trail")
		}
	})
}

// Each rule of PUT …/policy has its own case; a refused PUT changes nothing.
func TestPolicyRefusals(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	path := orgsPath(w.project) + "/" + w.org(t, w.project, "Acme") + "/policy"
	w.do(http.MethodPut, path, policy(true, false, 8, map[string]any{"role": "admin"}, false)).Expect(t, 200, nil)
	without := func(field string) map[string]any {
		p := policy(false, false, 1, nil, false)
		delete(p, field)
		return p
	}
	with := func(field string, v any) map[string]any {
		p := policy(false, false, 1, nil, false)
		p[field] = v
		return p
	}
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing body", nil, "body"},
		{"an array", []any{}, "body"},
		{"no ssoRequired", without("ssoRequired"), "ssoRequired"},
		{"ssoRequired a string", with("ssoRequired", "true"), "ssoRequired"},
		{"ssoRequired null", with("ssoRequired", nil), "ssoRequired"},
		{"no mfaRequired", without("mfaRequired"), "mfaRequired"},
		{"mfaRequired a number", with("mfaRequired", 1), "mfaRequired"},
		{"no revokeMintedOnDeprovision", without("revokeMintedOnDeprovision"), "revokeMintedOnDeprovision"},
		{"revokeMintedOnDeprovision a string", with("revokeMintedOnDeprovision", "no"), "revokeMintedOnDeprovision"},
		{"no sessionMaxHours", without("sessionMaxHours"), "sessionMaxHours"},
		{"sessionMaxHours a string", with("sessionMaxHours", "8"), "sessionMaxHours"},
		{"sessionMaxHours a fraction", with("sessionMaxHours", 1.5), "sessionMaxHours"},
		{"sessionMaxHours -1", with("sessionMaxHours", -1), "sessionMaxHours"},
		{"sessionMaxHours 721", with("sessionMaxHours", 721), "sessionMaxHours"},
		{"autoJoin a string", with("autoJoin", "member"), "autoJoin"},
		{"autoJoin without a role", with("autoJoin", map[string]any{}), "autoJoin.role"},
		{"autoJoin role empty", with("autoJoin", map[string]any{"role": ""}), "autoJoin.role"},
		{"autoJoin role a number", with("autoJoin", map[string]any{"role": 1}), "autoJoin.role"},
		{"autoJoin unknown role", with("autoJoin", map[string]any{"role": "auditor"}), "autoJoin.role"},
		{"autoJoin unknown field", with("autoJoin", map[string]any{"role": "member", "orgId": "org_x"}), "autoJoin.orgId"},
		{"unknown field", with("domains", []string{"acme.example"}), "domains"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { issuesName(t, w.do(http.MethodPut, path, c.body), c.field) })
	}
	w.do(http.MethodGet, path, nil).Expect(t, 200, map[string]any{"ssoRequired": true, "sessionMaxHours": float64(8), "autoJoin": map[string]any{"role": "admin"}})
	w.do(http.MethodPut, orgsPath(w.project)+"/org_nope/policy", policy(false, false, 0, nil, false)).Expect(t, 404, nil)
}

// identity.OrgDomains, as the ways in call it: the policy of the org that verified a
// domain, and autoJoin into it in the caller's transaction.
func TestOrgDomainsForTheWaysIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		ctx := context.Background()
		acme := w.org(t, w.project, "Acme")
		domains := orgsPath(w.project) + "/" + acme + "/domains"
		claim := w.do(http.MethodPost, domains, map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 201, nil)
		w.do(http.MethodPost, domains, map[string]any{"domain": "pending.example", "method": "dns"}).Expect(t, 201, nil)
		w.zone.set("_authcore-challenge.acme.example", claim["dnsRecord"].(map[string]any)["value"].(string))
		w.do(http.MethodPost, domains+"/acme.example/verify", nil).Expect(t, 200, nil)

		// Without a policy: the org, every rule off.
		p, ok, err := w.domains.DomainOrg(ctx, w.project, "acme.example")
		if err != nil || !ok || p != (identity.OrgPolicy{OrgID: acme}) {
			t.Fatalf("DomainOrg = %+v, %v, %v", p, ok, err)
		}
		for _, d := range []string{"pending.example", "other.example"} {
			if _, ok, err := w.domains.DomainOrg(ctx, w.project, d); ok || err != nil {
				t.Errorf("DomainOrg(%s) found an org (%v)", d, err)
			}
		}
		if _, ok, _ := w.domains.DomainOrg(ctx, "prj_other", "acme.example"); ok {
			t.Errorf("another project's DomainOrg found acme")
		}

		ada := signUpAs(t, w, "ada@acme.example")
		autoJoin := func(user, email string) {
			t.Helper()
			tx, err := w.a.Ent.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.domains.AutoJoin(ctx, tx, w.project, user, email); err != nil {
				_ = tx.Rollback()
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		members := func() []*ent.OrgMember {
			return w.a.Ent.OrgMember.Query().Where(orgmember.OrgID(acme)).AllX(ctx)
		}
		autoJoin(ada, "ada@acme.example")
		if m := members(); len(m) != 0 {
			t.Fatalf("autoJoin off, yet %d members", len(m))
		}

		w.do(http.MethodPut, orgsPath(w.project)+"/"+acme+"/policy", policy(true, true, 12, map[string]any{"role": "member"}, true)).Expect(t, 200, nil)
		p, ok, err = w.domains.DomainOrg(ctx, w.project, "ACME.example")
		if want := (identity.OrgPolicy{OrgID: acme, SSORequired: true, MFARequired: true, SessionMaxHours: 12, AutoJoinRole: "member", RevokeMintedOnDeprovision: true}); err != nil || !ok || p != want {
			t.Fatalf("DomainOrg = %+v, %v, %v; want %+v", p, ok, err, want)
		}
		autoJoin(ada, "Ada@ACME.example")
		autoJoin(ada, "ada@acme.example") // a member already: nothing more
		grace := signUpAs(t, w, "grace@pending.example")
		autoJoin(grace, "grace@pending.example") // a domain not verified: nothing
		m := members()
		if len(m) != 1 || m[0].UserID != ada || m[0].Role != "member" {
			t.Fatalf("members after autoJoin: %v", m)
		}
		if !strings.Contains(auditActions(t, w.a, w.admin, w.project), "org.member_add") {
			t.Errorf("autoJoin is not audited")
		}
		w.do(http.MethodGet, orgsPath(w.project)+"/"+acme+"/members", nil).Expect(t, 200, nil)
	})
}

// signUpAs signs up a person of the world's project with addr and answers their id.
func signUpAs(t *testing.T, w *world, addr string) string {
	t.Helper()
	r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup",
		Body: map[string]any{"email": addr, "password": "correct horse battery", "tenantId": w.project}})
	return r.Expect(t, 201, nil)["user"].(map[string]any)["id"].(string)
}
