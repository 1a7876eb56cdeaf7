package org_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/orginvitation"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

var (
	orgInvitationLink = regexp.MustCompile(`/console/org-invite\?token=(ac_oinv_[0-9A-Za-z]{38})`)
	verifyToken       = regexp.MustCompile(`ac_evf_[0-9A-Za-z]{38}`)
)

// inviteWorld is adminWorld with a real SMTP server the app mails to.
type inviteWorld struct {
	*adminWorld
	in *testkit.Inbox
}

func newInviteWorld(t *testing.T, st apptest.Store) *inviteWorld {
	in := testkit.StartInbox(t)
	// The clock jumps days ahead; sessions' access tokens outlive it.
	a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.SMTPURL, c.AccessTTL = in.URL, 30*24*time.Hour }))
	return &inviteWorld{adminWorld: newAdminWorld(t, a), in: in}
}

// mailTo waits for the n-th mail to addr.
func (w *inviteWorld) mailTo(t *testing.T, addr string, n int) testkit.Mail {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var to []testkit.Mail
		for _, m := range w.in.Mails() {
			if strings.EqualFold(m.To, addr) {
				to = append(to, m)
			}
		}
		if len(to) >= n {
			return to[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mails to %s, want %d", len(to), addr, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// invite invites email to org A as who (through the org admins' routes) and answers the
// mailed token.
func (w *inviteWorld) invite(t *testing.T, who *apptest.Session, email, role string, nth int) string {
	t.Helper()
	as(w.a, who)(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"email": email, "role": role}).
		Expect(t, 201, map[string]any{"orgId": w.orgA, "email": strings.ToLower(email), "role": role})
	m := w.mailTo(t, email, nth)
	got := orgInvitationLink.FindStringSubmatch(m.Text)
	if got == nil {
		t.Fatalf("no invitation link in:\n%s", m.Text)
	}
	if !strings.Contains(m.Text, `"Acme"`) {
		t.Errorf("the mail does not name the org, quoted:\n%s", m.Text)
	}
	return got[1]
}

// signUpAs makes a user of tenant with email and, when verify, verifies it by the mailed
// link, as a person would.
func (w *inviteWorld) signUpAs(t *testing.T, tenant, email string, verify bool) *apptest.Session {
	t.Helper()
	r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup",
		Body: map[string]any{"email": email, "password": "correct horse battery", "tenantId": tenant}}).Expect(t, 201, nil)
	s := &apptest.Session{Email: email, AccessToken: r["session"].(map[string]any)["accessToken"].(string), UserID: r["user"].(map[string]any)["id"].(string)}
	if verify {
		before := 0
		for _, m := range w.in.Mails() {
			if strings.EqualFold(m.To, email) {
				before++
			}
		}
		as(w.a, s)(http.MethodPost, "/v1/auth-core/email/verify-request", nil).Expect(t, 202, nil)
		token := verifyToken.FindString(w.mailTo(t, email, before+1).Text)
		as(w.a, s)(http.MethodPost, "/v1/auth-core/email/verify", map[string]any{"token": token}).Expect(t, 200, nil)
	}
	return s
}

func accept(a *apptest.App, who *apptest.Session, token string) *apptest.Response {
	return as(a, who)(http.MethodPost, "/v1/auth-core/orgs/invitations/accept", map[string]any{"token": token})
}

// An org admin invites an address; the link is mailed, the pending invitation listed
// without its token, and the person holding the address, verified, in the project's
// tenant, accepts it once.
func TestOrgInvitations(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newInviteWorld(t, st)
		email := strings.ToLower(apptest.UniqueEmail(t))
		token := w.invite(t, w.orgAdmin, strings.ToUpper(email), "member", 1)

		for _, list := range []*apptest.Response{
			as(w.a, w.orgAdmin)(http.MethodGet, ownPath(w.orgA)+"/invitations", nil),
			as(w.a, w.admin)(http.MethodGet, orgsPath(w.project)+"/"+w.orgA+"/invitations", nil),
		} {
			got := list.Expect(t, 200, nil)["invitations"].([]any)
			if len(got) != 1 || got[0].(map[string]any)["email"] != email || got[0].(map[string]any)["createdBy"] != w.orgAdmin.UserID {
				t.Errorf("invitations: %v", got)
			}
			if strings.Contains(string(list.Body), "ac_oinv_") {
				t.Errorf("a list shows a token: %s", list.Body)
			}
		}
		// Only the digest is kept.
		inv := w.a.Ent.OrgInvitation.Query().Where(orginvitation.OrgID(w.orgA)).OnlyX(t.Context())
		if strings.Contains(string(inv.Digest), token) || len(inv.Digest) != 32 {
			t.Errorf("stored %d bytes", len(inv.Digest))
		}

		invitee := w.signUpAs(t, w.project, email, true)
		got := accept(w.a, invitee, token).Expect(t, 200, nil)
		if got["org"].(map[string]any)["id"] != w.orgA || got["member"].(map[string]any)["userId"] != invitee.UserID || got["member"].(map[string]any)["role"] != "member" {
			t.Fatalf("accepted: %v", got)
		}
		if n := w.a.Ent.OrgMember.Query().Where(orgmember.OrgID(w.orgA), orgmember.UserID(invitee.UserID)).CountX(t.Context()); n != 1 {
			t.Fatalf("%d memberships", n)
		}
		accept(w.a, invitee, token).Expect(t, 409, map[string]any{"code": "invitation_used"})
		if got := as(w.a, w.orgAdmin)(http.MethodGet, ownPath(w.orgA)+"/invitations", nil).Expect(t, 200, nil)["invitations"].([]any); len(got) != 0 {
			t.Errorf("an accepted invitation is still pending: %v", got)
		}
		// A project admin invites through the project's routes too, to be owner.
		owner := strings.ToLower(apptest.UniqueEmail(t))
		as(w.a, w.admin)(http.MethodPost, orgsPath(w.project)+"/"+w.orgA+"/invitations", map[string]any{"email": owner, "role": "owner"}).Expect(t, 201, nil)
		if tok := orgInvitationLink.FindStringSubmatch(w.mailTo(t, owner, 1).Text); tok == nil {
			t.Fatal("no link")
		} else {
			got := accept(w.a, w.signUpAs(t, w.project, owner, true), tok[1]).Expect(t, 200, nil)
			if role := got["member"].(map[string]any)["role"]; role != "owner" {
				t.Errorf("role %v", role)
			}
		}

		actions := auditActions(t, w.a, w.admin, w.project)
		for _, want := range []string{"org.invitation_create", "org.invitation_accept"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit has no %s: %s", want, actions)
			}
		}
	})
}

// Each refusal of an invitation has its own case; none makes a member.
func TestOrgInvitationRefusals(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newInviteWorld(t, st)
		members := func() int { return w.a.Ent.OrgMember.Query().Where(orgmember.OrgID(w.orgA)).CountX(t.Context()) }
		before := members()

		t.Run("an admin cannot invite an owner", func(t *testing.T) {
			as(w.a, w.orgAdmin)(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"email": "o@example.com", "role": "owner"}).
				Expect(t, 403, map[string]any{"code": "owner_required"})
		})
		t.Run("bad bodies", func(t *testing.T) {
			do := as(w.a, w.orgAdmin)
			issuesName(t, do(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"role": "member"}), "email")
			issuesName(t, do(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"email": "not an address", "role": "member"}), "email")
			issuesName(t, do(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"email": "x@example.com", "role": "nobody"}), "role")
			issuesName(t, do(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"email": "x@example.com", "role": "member", "ttl": 1}), "ttl")
			issuesName(t, do(http.MethodPost, "/v1/auth-core/orgs/invitations/accept", map[string]any{}), "token")
		})
		t.Run("an address with a pending invitation", func(t *testing.T) {
			email := strings.ToLower(apptest.UniqueEmail(t))
			w.invite(t, w.owner, email, "member", 1)
			as(w.a, w.owner)(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"email": email, "role": "admin"}).
				Expect(t, 409, map[string]any{"code": "already_invited"})
		})
		t.Run("a member already", func(t *testing.T) {
			as(w.a, w.owner)(http.MethodPost, ownPath(w.orgA)+"/invitations", map[string]any{"email": w.plain.Email, "role": "admin"}).
				Expect(t, 409, map[string]any{"code": "already_member"})
			// Invited, then added directly before accepting.
			email := strings.ToLower(apptest.UniqueEmail(t))
			token := w.invite(t, w.owner, email, "member", 1)
			s := w.signUpAs(t, w.project, email, true)
			as(w.a, w.owner)(http.MethodPost, ownPath(w.orgA)+"/members", map[string]any{"userId": s.UserID, "role": "member"}).Expect(t, 201, nil)
			accept(w.a, s, token).Expect(t, 409, map[string]any{"code": "already_member"})
			as(w.a, w.owner)(http.MethodDelete, ownPath(w.orgA)+"/members/"+s.UserID, nil).Expect(t, 200, nil)
		})
		t.Run("wrong token", func(t *testing.T) {
			s := w.signUpAs(t, w.project, strings.ToLower(apptest.UniqueEmail(t)), true)
			accept(w.a, s, "ac_oinv_nope").Expect(t, 404, map[string]any{"code": "not_found"})
			accept(w.a, s, "ac_oinv_"+strings.Repeat("a", 38)).Expect(t, 404, map[string]any{"code": "not_found"})
		})
		t.Run("another address", func(t *testing.T) {
			token := w.invite(t, w.owner, strings.ToLower(apptest.UniqueEmail(t)), "member", 1)
			other := w.signUpAs(t, w.project, strings.ToLower(apptest.UniqueEmail(t)), true)
			accept(w.a, other, token).Expect(t, 403, map[string]any{"code": "invitation_email_mismatch"})
		})
		t.Run("an unverified address", func(t *testing.T) {
			email := strings.ToLower(apptest.UniqueEmail(t))
			token := w.invite(t, w.owner, email, "member", 1)
			accept(w.a, w.signUpAs(t, w.project, email, false), token).Expect(t, 403, map[string]any{"code": "email_not_verified"})
		})
		t.Run("the address in another project's tenant, or a dashboard user", func(t *testing.T) {
			email := strings.ToLower(apptest.UniqueEmail(t))
			token := w.invite(t, w.owner, email, "member", 1)
			otherAdmin := w.a.SignUp(t)
			otherProject := w.a.CreateProject(t, otherAdmin)
			accept(w.a, w.signUpAs(t, otherProject, email, true), token).Expect(t, 404, map[string]any{"code": "not_found"})
			accept(w.a, w.admin, token).Expect(t, 403, map[string]any{"code": "forbidden"})
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/invitations/accept", Body: map[string]any{"token": token}}).Expect(t, 401, nil)
		})
		t.Run("revoked", func(t *testing.T) {
			email := strings.ToLower(apptest.UniqueEmail(t))
			token := w.invite(t, w.owner, email, "member", 1)
			id := w.a.Ent.OrgInvitation.Query().Where(orginvitation.Email(email)).OnlyX(t.Context()).ID
			// Org B's admin, and A's plain member, cannot revoke it.
			as(w.a, w.ownerB)(http.MethodDelete, ownPath(w.orgA)+"/invitations/"+id, nil).Expect(t, 404, nil)
			as(w.a, w.ownerB)(http.MethodDelete, ownPath(w.orgB)+"/invitations/"+id, nil).Expect(t, 404, nil)
			as(w.a, w.plain)(http.MethodDelete, ownPath(w.orgA)+"/invitations/"+id, nil).Expect(t, 403, nil)
			as(w.a, w.orgAdmin)(http.MethodDelete, ownPath(w.orgA)+"/invitations/"+id, nil).Expect(t, 200, map[string]any{"ok": true, "id": id})
			as(w.a, w.orgAdmin)(http.MethodDelete, ownPath(w.orgA)+"/invitations/"+id, nil).Expect(t, 404, nil)
			accept(w.a, w.signUpAs(t, w.project, email, true), token).Expect(t, 409, map[string]any{"code": "invitation_revoked"})
			if !strings.Contains(auditActions(t, w.a, w.admin, w.project), "org.invitation_revoke") {
				t.Error("no org.invitation_revoke in the audit")
			}
		})
		t.Run("revoked by whoever holds the link (RFC 7009)", func(t *testing.T) {
			email := strings.ToLower(apptest.UniqueEmail(t))
			token := w.invite(t, w.owner, email, "member", 1)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/revoke", Body: url.Values{"token": {token}}.Encode(),
				Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)
			accept(w.a, w.signUpAs(t, w.project, email, true), token).Expect(t, 409, map[string]any{"code": "invitation_revoked"})
		})
		t.Run("expired", func(t *testing.T) {
			email := strings.ToLower(apptest.UniqueEmail(t))
			token := w.invite(t, w.owner, email, "member", 1)
			s := w.signUpAs(t, w.project, email, true)
			w.a.Clock.Advance(7*24*time.Hour + time.Second)
			accept(w.a, s, token).Expect(t, 409, map[string]any{"code": "invitation_expired"})
		})
		t.Run("one address flooded", func(t *testing.T) {
			// Revoking and inviting again still counts: three mails an hour to an address.
			email := strings.ToLower(apptest.UniqueEmail(t))
			for i := 1; i <= 3; i++ {
				w.invite(t, w.owner, email, "member", i)
				id := w.a.Ent.OrgInvitation.Query().Where(orginvitation.Email(email), orginvitation.RevokedAtIsNil()).OnlyX(t.Context()).ID
				as(w.a, w.owner)(http.MethodDelete, ownPath(w.orgA)+"/invitations/"+id, nil).Expect(t, 200, nil)
			}
			as(w.a, w.ownerB)(http.MethodPost, ownPath(w.orgB)+"/invitations", map[string]any{"email": email, "role": "member"}).
				Expect(t, 429, map[string]any{"code": "rate_limited"})
		})
		t.Run("its org deleted", func(t *testing.T) {
			doomed := as(w.a, w.admin)(http.MethodPost, orgsPath(w.project), map[string]any{"name": "Doomed"}).Expect(t, 201, nil)["id"].(string)
			email := strings.ToLower(apptest.UniqueEmail(t))
			as(w.a, w.admin)(http.MethodPost, orgsPath(w.project)+"/"+doomed+"/invitations", map[string]any{"email": email, "role": "member"}).Expect(t, 201, nil)
			token := orgInvitationLink.FindStringSubmatch(w.mailTo(t, email, 1).Text)[1]
			as(w.a, w.admin)(http.MethodDelete, orgsPath(w.project)+"/"+doomed, nil).Expect(t, 200, nil)
			accept(w.a, w.signUpAs(t, w.project, email, true), token).Expect(t, 404, map[string]any{"code": "not_found"})
		})
		if n := members(); n != before {
			t.Errorf("%d members after refusals, want %d", n, before)
		}
	})
}
