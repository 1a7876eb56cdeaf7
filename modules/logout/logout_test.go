package logout_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// receiver is an app's back-channel logout endpoint on loopback. It checks each token as
// Back-Channel Logout 1.0 §2.6 says a relying party must, with stock libraries: the
// signature against the server's JWKS (go-oidc's remote key set), typ logout+jwt, and the
// claims; what it accepted it keeps.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	keys   *oidc.RemoteKeySet
	down   atomic.Bool // answers 503 while set
	mu     sync.Mutex
	tokens []map[string]any
	bad    []string
}

func newReceiver(t *testing.T, a *apptest.App) *receiver {
	r := &receiver{t: t, keys: oidc.NewRemoteKeySet(context.Background(), a.Base+"/.well-known/jwks.json")}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(req.Body)
		form, _ := url.ParseQuery(string(body))
		raw := form.Get("logout_token")
		claims, why := r.check(req, raw)
		r.mu.Lock()
		defer r.mu.Unlock()
		if why != "" {
			r.bad = append(r.bad, why)
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		r.tokens = append(r.tokens, claims)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) check(req *http.Request, raw string) (map[string]any, string) {
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return nil, "not a form POST"
	}
	payload, err := r.keys.VerifySignature(context.Background(), raw)
	if err != nil {
		return nil, "signature: " + err.Error()
	}
	sig, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.EdDSA})
	if err != nil || sig.Signatures[0].Header.ExtraHeaders["typ"] != "logout+jwt" {
		return nil, "typ is not logout+jwt"
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, "claims"
	}
	events, _ := claims["events"].(map[string]any)
	if _, ok := events["http://schemas.openid.net/event/backchannel-logout"]; !ok || claims["nonce"] != nil || claims["jti"] == nil || claims["iat"] == nil || claims["exp"] == nil {
		return nil, "claims do not make a logout token"
	}
	return claims, ""
}

func (r *receiver) got() ([]map[string]any, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.tokens...), append([]string(nil), r.bad...)
}

// app registers a project's app whose back-channel logout URI is r's, as its admin would.
func app(t *testing.T, a *apptest.App, project string, r *receiver) string {
	t.Helper()
	row, err := a.Ent.OAuthClient.Create().SetName("app").SetRedirectUris([]string{"http://127.0.0.1/cb"}).SetApplicationType("web").
		SetGrantTypes([]string{"authorization_code"}).SetProjectID(project).SetAppType("web").SetFirstParty(true).
		SetBackchannelLogoutURI(r.srv.URL + "/logout").Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return row.ID
}

// joined records that the person's session signed in to app, as a code issued to the app
// records it.
func joined(t *testing.T, a *apptest.App, s *apptest.Session, project, appID string) {
	t.Helper()
	if err := a.Ent.AppSession.Create().SetSid(s.SessionHandle).SetClientID(appID).SetUserID(s.UserID).SetProjectID(project).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// eventually waits for cond: a bound on liveness, not a timing (it returns as soon as cond
// holds), wide enough for a loaded CI machine under -race, where every check's sign-in
// hashes a password (TestBackChannelRetries once missed 10 s on PostgreSQL).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("never: %s", what)
}

func world(t *testing.T, st apptest.Store) (*apptest.App, *apptest.Session, string) {
	a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP = true }))
	admin := a.SignUp(t)
	return a, admin, a.CreateProject(t, admin)
}

// A person's session that signed in to two apps ends — by their own sign-out, by an
// admin's revoke, by an admin blocking or deleting the person (SPEC §25) — and each of those apps gets exactly one logout token, verified against
// the JWKS, naming the person and the session; an app the session never signed in to
// gets none.
func TestBackChannelLogout(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, project := world(t, st)
		iss := a.Get("/.well-known/openid-configuration").Expect(t, 200, nil)["issuer"]
		mail, calendar, other := newReceiver(t, a), newReceiver(t, a), newReceiver(t, a)
		mailID, calendarID := app(t, a, project, mail), app(t, a, project, calendar)
		app(t, a, project, other)

		ends := []string{"sign-out", "admin revoke", "blocked", "deleted"}
		for _, end := range ends {
			person := a.SignUpIn(t, project)
			joined(t, a, person, project, mailID)
			joined(t, a, person, project, calendarID)
			user := "/v1/projects/" + project + "/users/" + person.UserID
			switch end {
			case "sign-out":
				a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Header: person.Bearer()}).Expect(t, 200, nil)
			case "admin revoke":
				a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/revoke", Header: admin.Bearer(),
					Body: map[string]any{"projectId": project, "sessionHandle": person.SessionHandle}}).Expect(t, 200, map[string]any{"revoked": float64(1)})
			case "blocked":
				a.Do(apptest.Req{Method: http.MethodPatch, Path: user, Header: admin.Bearer(), Body: map[string]any{"blocked": true}}).Expect(t, 200, nil)
			case "deleted":
				a.Do(apptest.Req{Method: http.MethodDelete, Path: user, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"sessionsRevoked": float64(1)})
			}
			for _, r := range []struct {
				rec *receiver
				id  string
			}{{mail, mailID}, {calendar, calendarID}} {
				eventually(t, end+": a token at "+r.id, func() bool {
					got, _ := r.rec.got()
					return len(got) > 0 && got[len(got)-1]["sid"] == person.SessionHandle
				})
				got, bad := r.rec.got()
				last := got[len(got)-1]
				if len(bad) > 0 || last["sub"] != person.UserID || last["aud"] != r.id || last["iss"] != iss {
					t.Fatalf("%s: %v (refused: %v)", end, last, bad)
				}
			}
		}
		time.Sleep(600 * time.Millisecond) // more than a poll: anything owed is sent by now
		for _, r := range []*receiver{mail, calendar} {
			if got, _ := r.got(); len(got) != len(ends) {
				t.Fatalf("an app got %d tokens for %d ended sessions", len(got), len(ends))
			}
		}
		if got, bad := other.got(); len(got)+len(bad) != 0 {
			t.Fatalf("an app no session signed in to heard %v %v", got, bad)
		}
		list := a.Do(apptest.Req{Path: "/v1/projects/" + project + "/apps/" + mailID + "/logout-deliveries", Header: admin.Bearer()}).Expect(t, 200, nil)
		ds := list["deliveries"].([]any)
		if len(ds) != len(ends) || ds[0].(map[string]any)["status"] != "delivered" {
			t.Fatalf("deliveries %v", ds)
		}
	})
}

// An app that is down gets its token when it comes back; one that stays down is given up
// after the last attempt, and its admins see why.
func TestBackChannelRetries(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, project := world(t, st)
		r := newReceiver(t, a)
		id := app(t, a, project, r)
		// The admin reads the list as the clock runs on for hours: a fresh sign-in each time.
		deliveries := func() []any {
			got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": admin.Email, "password": admin.Password}}).Expect(t, 200, nil)
			bearer := map[string]string{"Authorization": "Bearer " + got["session"].(map[string]any)["accessToken"].(string)}
			return a.Do(apptest.Req{Path: "/v1/projects/" + project + "/apps/" + id + "/logout-deliveries", Header: bearer}).Expect(t, 200, nil)["deliveries"].([]any)
		}
		r.down.Store(true)
		person := a.SignUpIn(t, project)
		joined(t, a, person, project, id)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Header: person.Bearer()}).Expect(t, 200, nil)
		eventually(t, "a failed first attempt", func() bool {
			d := deliveries()
			return len(d) == 1 && d[0].(map[string]any)["lastStatusCode"] == float64(503)
		})
		r.down.Store(false)
		a.Clock.Advance(7 * time.Second) // past the first retry's wait, jitter included
		eventually(t, "delivered on retry", func() bool { return deliveries()[0].(map[string]any)["status"] == "delivered" })

		r.down.Store(true)
		second := a.SignUpIn(t, project)
		joined(t, a, second, project, id)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Header: second.Bearer()}).Expect(t, 200, nil)
		for attempt := 1; attempt <= 8; attempt++ {
			eventually(t, "attempt", func() bool { return deliveries()[0].(map[string]any)["attempts"] == float64(attempt) })
			a.Clock.Advance(13 * time.Minute) // past the longest wait
		}
		eventually(t, "given up", func() bool { return deliveries()[0].(map[string]any)["status"] == "failed" })
		if d := deliveries()[0].(map[string]any); d["lastError"] != "answered 503" || d["nextAttemptAt"] != nil {
			t.Fatalf("given up: %v", d)
		}
	})
}

// With two replicas on one PostgreSQL, each logout token is sent once, by one of them,
// whichever replica revoked the session.
func TestReplicasShareTheLogoutQueue(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("needs PostgreSQL")
	}
	st := apptest.Stores(t)[1]
	url := st.FreshURL(t)
	allowHTTP := apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP = true })
	a, b := apptest.StartURL(t, st.Name, url, allowHTTP), apptest.StartURL(t, st.Name, url, allowHTTP)
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	r := newReceiver(t, a)
	id := app(t, a, project, r)
	var sids []string
	for i := range 10 {
		person := a.SignUpIn(t, project)
		joined(t, a, person, project, id)
		sids = append(sids, person.SessionHandle)
		on := map[bool]*apptest.App{true: a, false: b}[i%2 == 0] // each replica revokes half
		on.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Header: person.Bearer()}).Expect(t, 200, nil)
	}
	eventually(t, "10 logout tokens", func() bool { got, _ := r.got(); return len(got) >= 10 })
	time.Sleep(600 * time.Millisecond) // more than a poll of each replica: a duplicate would be here
	got, bad := r.got()
	seen := map[any]int{}
	for _, c := range got {
		seen[c["sid"]]++
	}
	if len(got) != 10 || len(seen) != 10 || len(bad) != 0 {
		t.Fatalf("%d tokens for %d sessions %v (refused %v): one was sent twice or not at all", len(got), len(seen), sids, bad)
	}
}
