package project_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/invitation"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

var (
	invitationLink = regexp.MustCompile(`/console/invite\?token=(ac_inv_[0-9A-Za-z]{38})`)
	verifyToken    = regexp.MustCompile(`ac_evf_[0-9A-Za-z]{38}`)
)

// invitationWorld is a project, its admin, and a real SMTP server the app mails to.
type invitationWorld struct {
	a       *apptest.App
	in      *testkit.Inbox
	admin   *apptest.Session
	project string
}

func newInvitationWorld(t *testing.T, st apptest.Store, opts ...apptest.Option) *invitationWorld {
	in := testkit.StartInbox(t)
	// The clock jumps days ahead; sessions' access tokens outlive it.
	a := apptest.Start(t, st, append(opts, apptest.WithConfig(func(c *config.Config) { c.SMTPURL, c.AccessTTL = in.URL, 30*24*time.Hour }))...)
	admin := a.SignUp(t)
	return &invitationWorld{a: a, in: in, admin: admin, project: a.CreateProject(t, admin)}
}

func (w *invitationWorld) do(method, path string, body any, who *apptest.Session) *apptest.Response {
	var header map[string]string
	if who != nil {
		header = who.Bearer()
	}
	return w.a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: header})
}

func (w *invitationWorld) invite(email, role string) *apptest.Response {
	return w.do(http.MethodPost, "/v1/projects/"+w.project+"/invitations", map[string]any{"email": email, "role": role}, w.admin)
}

func (w *invitationWorld) accept(token string, who *apptest.Session) *apptest.Response {
	return w.do(http.MethodPost, "/v1/auth-core/invitations/accept", map[string]any{"token": token}, who)
}

func (w *invitationWorld) pending(t *testing.T) []any {
	t.Helper()
	return w.do(http.MethodGet, "/v1/projects/"+w.project+"/invitations", nil, w.admin).Expect(t, 200, nil)["invitations"].([]any)
}

// mailTo waits for the n-th mail to addr and answers it.
func (w *invitationWorld) mailTo(t *testing.T, addr string, n int) testkit.Mail {
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

// link is the invitation token a mail carries.
func link(t *testing.T, m testkit.Mail) string {
	t.Helper()
	got := invitationLink.FindStringSubmatch(m.Text)
	if got == nil {
		t.Fatalf("no invitation link in:\n%s", m.Text)
	}
	return got[1]
}

// signUpAs creates a dashboard account for email and, when verify, verifies it by the
// mailed link, as a person would.
func (w *invitationWorld) signUpAs(t *testing.T, email string, verify bool) *apptest.Session {
	t.Helper()
	r := w.do(http.MethodPost, "/v1/auth-core/signup", map[string]any{"email": email, "password": "correct horse battery"}, nil).Expect(t, 201, nil)
	s := &apptest.Session{Email: email, Password: "correct horse battery", AccessToken: r["session"].(map[string]any)["accessToken"].(string),
		UserID: r["user"].(map[string]any)["id"].(string)}
	if verify {
		before := 0
		for _, m := range w.in.Mails() {
			if strings.EqualFold(m.To, email) {
				before++
			}
		}
		w.do(http.MethodPost, "/v1/auth-core/email/verify-request", nil, s).Expect(t, 202, nil)
		token := verifyToken.FindString(w.mailTo(t, email, before+1).Text)
		w.do(http.MethodPost, "/v1/auth-core/email/verify", map[string]any{"token": token}, s).Expect(t, 200, nil)
	}
	return s
}

func (w *invitationWorld) actions(t *testing.T, action string) []map[string]any {
	t.Helper()
	evs, err := w.a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(w.project), auditevent.Action(action)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range evs {
		out = append(out, e.Metadata)
	}
	return out
}

// SPEC §9b (N19): an admin invites an address that has no account yet; the person signs
// up with it, verifies it, and accepts the mailed link, once.
func TestInvitationForSomeoneWithoutAnAccount(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newInvitationWorld(t, st)
		invitee := apptest.UniqueEmail(t)

		inv := w.invite(strings.ToUpper(invitee), "developer").Expect(t, 201, map[string]any{"projectId": w.project, "email": invitee, "role": "developer", "createdBy": w.admin.UserID})
		created, _ := time.Parse(time.RFC3339Nano, inv["createdAt"].(string))
		expires, _ := time.Parse(time.RFC3339Nano, inv["expiresAt"].(string))
		if id, _ := inv["id"].(string); !strings.HasPrefix(id, "inv_") || expires.Sub(created) != 7*24*time.Hour {
			t.Fatalf("invitation %v", inv)
		}
		if _, ok := inv["token"]; ok {
			t.Fatal("the answer carries the link's secret")
		}
		m := w.mailTo(t, invitee, 1)
		token := link(t, m)
		if !strings.Contains(m.Text, `Project: "Project TestInvitationForSomeoneWithoutAnAccount/`+st.Name+`"`) || !strings.Contains(m.Text, "Invited by: \""+w.admin.Email+"\"") ||
			!strings.Contains(m.Text, "Role: developer") || !strings.HasPrefix(link(t, m), "ac_inv_") {
			t.Fatalf("mail:\n%s", m.Text)
		}
		if got := w.pending(t); len(got) != 1 || got[0].(map[string]any)["id"] != inv["id"] {
			t.Fatalf("pending: %v", got)
		}
		if md := w.actions(t, "project.invitation_create"); len(md) != 1 || md[0]["email"] != invitee || md[0]["role"] != "developer" {
			t.Fatalf("audit: %v", md)
		}

		// Signed up but not verified: refused, and the invitation stays pending.
		person := w.signUpAs(t, invitee, false)
		w.accept(token, person).Expect(t, 403, map[string]any{"code": "email_not_verified"})
		// Someone else, verified, cannot take it.
		stranger := w.signUpAs(t, apptest.UniqueEmail(t), true)
		w.accept(token, stranger).Expect(t, 403, map[string]any{"code": "invitation_email_mismatch"})
		if len(w.pending(t)) != 1 {
			t.Fatal("a refused acceptance spent the invitation")
		}
		w.do(http.MethodGet, "/v1/projects/"+w.project, nil, person).Expect(t, 403, nil)

		// Verified: accepted, a member with the invited role.
		person = w.signUpAsVerified(t, person)
		got := w.accept(token, person).Expect(t, 200, nil)
		if p := got["project"].(map[string]any); p["id"] != w.project || p["role"] != "developer" {
			t.Fatalf("project: %v", p)
		}
		if mem := got["member"].(map[string]any); mem["userId"] != person.UserID || mem["email"] != invitee || mem["role"] != "developer" {
			t.Fatalf("member: %v", mem)
		}
		w.do(http.MethodGet, "/v1/projects/"+w.project, nil, person).Expect(t, 200, map[string]any{"role": "developer"})
		if md := w.actions(t, "project.member_add"); len(md) != 1 || md[0]["userId"] != person.UserID || md[0]["invitationId"] != inv["id"] || md[0]["role"] != "developer" {
			t.Fatalf("audit: %v", md)
		}
		// Single use; no longer pending.
		w.accept(token, person).Expect(t, 400, map[string]any{"code": "invalid_token"})
		if len(w.pending(t)) != 0 {
			t.Fatal("an accepted invitation is still pending")
		}
		// A member is not invited again.
		w.invite(invitee, "admin").Expect(t, 409, map[string]any{"code": "already_member"})
	})
}

// signUpAsVerified verifies s's address by the mailed link.
func (w *invitationWorld) signUpAsVerified(t *testing.T, s *apptest.Session) *apptest.Session {
	t.Helper()
	before := 0
	for _, m := range w.in.Mails() {
		if strings.EqualFold(m.To, s.Email) {
			before++
		}
	}
	w.do(http.MethodPost, "/v1/auth-core/email/verify-request", nil, s).Expect(t, 202, nil)
	token := verifyToken.FindString(w.mailTo(t, s.Email, before+1).Text)
	w.do(http.MethodPost, "/v1/auth-core/email/verify", map[string]any{"token": token}, s).Expect(t, 200, nil)
	return s
}

// An invitation ends when an admin revokes it, when its 7 days pass, and when whoever holds
// its link revokes it (RFC 7009) or a scanner reports it leaked: it is a credential kind.
func TestInvitationsEnd(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		scanner := apptest.NewScanner(t)
		w := newInvitationWorld(t, st, scanner.Trusted)
		person := w.signUpAs(t, apptest.UniqueEmail(t), true)
		issue := func(n int) (string, string) {
			inv := w.invite(person.Email, "viewer").Expect(t, 201, nil)
			return inv["id"].(string), link(t, w.mailTo(t, person.Email, n))
		}
		revoked := func(t *testing.T, token string) {
			t.Helper()
			w.accept(token, person).Expect(t, 400, map[string]any{"code": "invalid_token"})
			if len(w.pending(t)) != 0 {
				t.Fatalf("still pending: %v", w.pending(t))
			}
		}
		base := "/v1/projects/" + w.project + "/invitations/"

		// By its admin. (The mail count starts at 2: one verification mail went before.)
		id, token := issue(2)
		w.invite(person.Email, "admin").Expect(t, 409, map[string]any{"code": "already_invited"})
		w.do(http.MethodDelete, base+id, nil, w.admin).Expect(t, 200, map[string]any{"ok": true, "invitationId": id})
		revoked(t, token)
		w.do(http.MethodDelete, base+id, nil, w.admin).Expect(t, 404, map[string]any{"code": "not_found"})
		w.do(http.MethodDelete, base+"inv_nope", nil, w.admin).Expect(t, 404, nil)

		// By whoever holds the link (RFC 7009).
		_, token = issue(3)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/revoke", Body: url.Values{"token": {token}}.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)
		revoked(t, token)

		// By a leak report.
		_, token = issue(4)
		var labels []map[string]string
		scanner.Report(t, w.a, token).Decode(t, &labels)
		if len(labels) != 1 || labels[0]["label"] != "true_positive" {
			t.Fatalf("leak report: %v", labels)
		}
		revoked(t, token)
		if md := w.actions(t, "project.invitation_revoke"); len(md) != 2 {
			t.Fatalf("revoke records: %v", md)
		}
		if md := w.actions(t, "credential.leak_revoke"); len(md) != 1 || md[0]["invitationId"] == nil {
			t.Fatalf("leak records: %v", md)
		}

		// Three mails an hour to one address: the fourth waits.
		w.invite(person.Email, "viewer").Expect(t, 429, map[string]any{"code": "rate_limited"})
		w.a.Clock.Advance(time.Hour + time.Second)

		// By time: 7 days.
		_, token = issue(5)
		w.a.Clock.Advance(7*24*time.Hour + time.Second)
		revoked(t, token)
	})
}

// Who may do what, and every refusal of bad input: a clear 4xx and nothing written.
func TestInvitationRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newInvitationWorld(t, st)
		dev := w.a.SignUp(t)
		w.a.AddMember(t, w.admin, w.project, dev, "developer")
		base := "/v1/projects/" + w.project + "/invitations"

		// Admins only.
		w.do(http.MethodPost, base, map[string]any{"email": apptest.UniqueEmail(t), "role": "viewer"}, dev).Expect(t, 403, map[string]any{"code": "forbidden"})
		w.do(http.MethodGet, base, nil, dev).Expect(t, 403, nil)
		w.do(http.MethodPost, base, map[string]any{"email": apptest.UniqueEmail(t), "role": "viewer"}, nil).Expect(t, 401, nil)
		w.do(http.MethodPost, "/v1/auth-core/invitations/accept", map[string]any{"token": "ac_inv_x"}, nil).Expect(t, 401, nil)

		issue := func(field, reason string) map[string]any {
			return map[string]any{"code": "validation_failed", "issues": []any{map[string]any{"field": field, "reason": reason}}}
		}
		for name, c := range map[string]struct {
			body any
			want map[string]any
		}{
			"missing body":          {nil, map[string]any{"code": "validation_failed"}},
			"unparsable":            {"{", map[string]any{"code": "validation_failed"}},
			"an array":              {[]any{}, map[string]any{"code": "validation_failed"}},
			"no email":              {map[string]any{"role": "viewer"}, issue("email", "required string")},
			"email a number":        {map[string]any{"email": 5, "role": "viewer"}, issue("email", "required string")},
			"email not an address":  {map[string]any{"email": "nobody", "role": "viewer"}, issue("email", "not a valid email address")},
			"email with a name":     {map[string]any{"email": "Eve <eve@example.com>", "role": "viewer"}, issue("email", "not a valid email address")},
			"email of 255 bytes":    {map[string]any{"email": strings.Repeat("a", 243) + "@example.com", "role": "viewer"}, issue("email", "not a valid email address")},
			"no role":               {map[string]any{"email": "x@example.com"}, issue("role", "must be viewer, developer or admin")},
			"role owner":            {map[string]any{"email": "x@example.com", "role": "owner"}, issue("role", "must be viewer, developer or admin")},
			"role a number":         {map[string]any{"email": "x@example.com", "role": 3}, issue("role", "must be viewer, developer or admin")},
			"role null":             {map[string]any{"email": "x@example.com", "role": nil}, issue("role", "must be viewer, developer or admin")},
			"an address and a role": {map[string]any{"email": 1, "role": "x"}, nil},
		} {
			t.Run(name, func(t *testing.T) {
				want := c.want
				if want == nil {
					want = map[string]any{"code": "validation_failed"}
				}
				w.do(http.MethodPost, base, c.body, w.admin).Expect(t, 400, want)
			})
		}
		// An address of exactly 254 bytes is one.
		w.invite(strings.Repeat("a", 242)+"@example.com", "viewer").Expect(t, 201, nil)
		if n, _ := w.a.Ent.Invitation.Query().Where(invitation.ProjectID(w.project)).Count(context.Background()); n != 1 {
			t.Fatalf("%d invitations written, want the one valid", n)
		}
		for name, c := range map[string]struct {
			body any
			code string
		}{
			"missing body":   {nil, "validation_failed"},
			"unparsable":     {"{", "validation_failed"},
			"no token":       {map[string]any{}, "validation_failed"},
			"token a number": {map[string]any{"token": 7}, "validation_failed"},
			"not a token":    {map[string]any{"token": "hello"}, "invalid_token"},
			"a forged token": {map[string]any{"token": "ac_inv_" + strings.Repeat("A", 38)}, "invalid_token"},
			"another's kind": {map[string]any{"token": w.admin.RefreshToken}, "invalid_token"},
		} {
			t.Run("accept: "+name, func(t *testing.T) {
				w.do(http.MethodPost, "/v1/auth-core/invitations/accept", c.body, dev).Expect(t, 400, map[string]any{"code": c.code})
			})
		}
	})
}

// Inviting is among the routes that add members: it wants the step-up window from an admin
// with a second factor (SPEC §17), and mail.
func TestInvitingWantsAStepUpAndMail(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newInvitationWorld(t, st)
		pending := w.do(http.MethodPost, "/v1/auth-core/mfa/totp", nil, w.admin).Expect(t, 201, nil)
		code, err := totp.GenerateCodeCustom(pending["secret"].(string), w.a.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		w.do(http.MethodPost, "/v1/auth-core/mfa/totp/"+pending["id"].(string)+"/confirm", map[string]any{"code": code}, w.admin).Expect(t, 200, nil)
		w.a.Clock.Advance(16 * time.Minute)
		w.invite(apptest.UniqueEmail(t), "viewer").Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		if len(w.pending(t)) != 0 || len(w.in.Mails()) != 0 {
			t.Fatal("a refused invitation was written or mailed")
		}

		noMail := apptest.Start(t, st)
		admin := noMail.SignUp(t)
		prj := noMail.CreateProject(t, admin)
		noMail.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/invitations", Header: admin.Bearer(),
			Body: map[string]any{"email": apptest.UniqueEmail(t), "role": "viewer"}}).Expect(t, 503, map[string]any{"code": "mail_not_configured"})
	})
}
