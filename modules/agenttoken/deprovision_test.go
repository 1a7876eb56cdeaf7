package agenttoken_test

import (
	"context"
	"net/http"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/identity"
)

// The agent tokens a deprovisioned org admin minted (SPEC §27) are listed in the event
// org.member_deprovisioned; they keep working unless the org's policy says
// revokeMintedOnDeprovision, and then they stop introspecting at once.
func TestDeprovisionListsMintedTokens(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var dep identity.Deprovisioning
		w := newOrgWorld(t, st, apptest.WithFx(fx.Populate(&dep)))
		w.do(w.admin, http.MethodPut, "/v1/projects/"+w.project+"/orgs/"+w.orgB+"/policy", map[string]any{"ssoRequired": false, "mfaRequired": false, "sessionMaxHours": 0, "revokeMintedOnDeprovision": true}).
			Expect(t, 200, map[string]any{"revokeMintedOnDeprovision": true})
		mint := func(who *apptest.Session, org string) (id, token string) {
			got := w.do(who, http.MethodPost, orgAgents(org), map[string]any{"agentName": "helper-of-" + org}).Expect(t, 200, nil)
			return got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)
		}
		keptID, kept := mint(w.ownerA, w.orgA)
		goneID, gone := mint(w.ownerB, w.orgB)
		deprovision := func(who *apptest.Session, org string) {
			if err := dep.Deprovision(context.Background(), identity.Deprovision{TenantID: w.project, UserID: who.UserID, OrgID: org, Actor: "directory:test"}); err != nil {
				t.Fatal(err)
			}
		}
		deprovision(w.ownerA, w.orgA)
		deprovision(w.ownerB, w.orgB)
		if w.introspect(t, kept)["active"] != true {
			t.Fatal("a token of an org whose policy keeps them was revoked")
		}
		w.me(t, kept)
		if w.introspect(t, gone)["active"] != false {
			t.Fatal("a token of an org whose policy revokes them still introspects")
		}
		w.a.Do(apptest.Req{Path: "/v1/auth-core/ai/me", Header: map[string]string{"Authorization": "Bearer " + gone}}).Expect(t, 401, nil)

		events := w.do(w.admin, http.MethodGet, "/v1/projects/"+w.project+"/audit?limit=200", nil).Expect(t, 200, nil)["events"].([]any)
		listed := map[string]map[string]any{}
		revokes := 0
		for _, e := range events {
			ev := e.(map[string]any)
			md, _ := ev["metadata"].(map[string]any)
			switch ev["action"] {
			case "org.member_deprovisioned":
				for _, m := range md["minted"].([]any) {
					c := m.(map[string]any)
					c["org"] = ev["orgId"]
					listed[c["id"].(string)] = c
				}
			case "ai_token.revoke":
				if md["reason"] == "user_deprovisioned" && ev["actorType"] == "scim_directory" && ev["orgId"] == w.orgB {
					revokes++
				}
			}
		}
		if k, g := listed[keptID], listed[goneID]; len(listed) != 2 || k["revoked"] != false || k["org"] != w.orgA || k["kind"] != "ai_agent" ||
			k["name"] != "helper-of-"+w.orgA || g["revoked"] != true || g["org"] != w.orgB {
			t.Fatalf("listed: %v", listed)
		}
		if revokes != 1 {
			t.Fatalf("%d revoke records of the deprovisioning", revokes)
		}
	})
}
