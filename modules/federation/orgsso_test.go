package federation_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// txtZone is a real DNS server on loopback that answers TXT queries from a map; the app
// asks it through AUTHCORE_DNS_RESOLVER, so an org proves its domain as in production.
type txtZone struct {
	addr string
	mu   sync.Mutex
	txt  map[string]string
}

func startTXTZone(t testing.TB) *txtZone {
	t.Helper()
	z := &txtZone{txt: map[string]string{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	z.addr = pc.LocalAddr().String()
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		z.mu.Lock()
		v, ok := z.txt[strings.TrimSuffix(strings.ToLower(q.Name), ".")]
		z.mu.Unlock()
		if !ok {
			m.Rcode = dns.RcodeNameError
		} else if q.Qtype == dns.TypeTXT {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return z
}

// orgWorld is a world whose project has orgs that prove domains through its DNS server.
type orgWorld struct {
	*world
	zone *txtZone
}

func newOrgWorld(t testing.TB, st apptest.Store) *orgWorld {
	t.Helper()
	z := startTXTZone(t)
	// A public URL on localhost: WebAuthn takes no IP address for a relying party.
	w := newWorld(t, st, apptest.WithConfig(func(c *config.Config) {
		_, port, _ := net.SplitHostPort(c.Addr)
		c.PublicURL = "http://localhost:" + port
		c.DNSResolver = z.addr
	}))
	return &orgWorld{world: w, zone: z}
}

func (w *orgWorld) do(method, path string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: w.admin.Bearer()})
}

func (w *orgWorld) orgs() string { return "/v1/projects/" + w.project + "/orgs" }

// newOrg creates an org and, for each domain, proves it by its TXT record through the
// org routes and the DNS server.
func (w *orgWorld) newOrg(t testing.TB, name string, domains ...string) string {
	t.Helper()
	id := w.do(http.MethodPost, w.orgs(), map[string]any{"name": name}).Expect(t, 201, nil)["id"].(string)
	for _, d := range domains {
		claim := w.do(http.MethodPost, w.orgs()+"/"+id+"/domains", map[string]any{"domain": d, "method": "dns"}).Expect(t, 201, nil)
		rec := claim["dnsRecord"].(map[string]any)
		w.zone.mu.Lock()
		w.zone.txt[rec["name"].(string)] = rec["value"].(string)
		w.zone.mu.Unlock()
		w.do(http.MethodPost, w.orgs()+"/"+id+"/domains/"+d+"/verify", nil).Expect(t, 200, map[string]any{"status": "verified"})
	}
	return id
}

// connect adds an OIDC connection of the upstream to org and registers its client there.
func (w *orgWorld) connect(t *testing.T, org, name string) provider {
	t.Helper()
	clientID, secret := "client-"+rnd(6), "secret-"+rnd(16)
	got := w.do(http.MethodPost, w.orgs()+"/"+org+"/connections", map[string]any{"type": "oidc", "name": name, "issuer": w.up.Issuer,
		"clientId": clientID, "clientSecret": secret, "trustEmail": true}).Expect(t, 201, map[string]any{"orgId": org, "type": "oidc", "name": name})
	w.up.AddClient(t, clientID, secret, got["callbackUrl"].(string))
	id := got["id"].(string)
	return provider{ID: id, ClientID: clientID, Start: w.a.Config.PublicURL + "/v1/auth-core/providers/" + id + "/start"}
}

func (w *orgWorld) members(t *testing.T, org, userID string) int {
	t.Helper()
	return w.a.Ent.OrgMember.Query().Where(orgmember.OrgID(org), orgmember.UserID(userID)).CountX(t.Context())
}

// An org's connections are providers of the project's tenant bound to the org: an admin
// adds, lists, reads, changes and removes them under the org; another org's are not found,
// nor an org of another project; saml is not yet; every change is audited with the org.
func TestOrgConnections(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		acme, globex := w.newOrg(t, "Acme"), w.newOrg(t, "Globex")
		conns := w.orgs() + "/" + acme + "/connections"

		w.do(http.MethodPost, conns, map[string]any{"type": "saml", "name": "Acme SAML"}).
			Expect(t, 400, map[string]any{"code": "validation_failed"})
		w.do(http.MethodPost, conns, map[string]any{"type": "oauth2", "name": "x"}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		w.do(http.MethodPost, conns, map[string]any{"type": "oidc", "name": "no issuer"}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		w.do(http.MethodPost, w.orgs()+"/org_nope/connections", map[string]any{"type": "oidc", "name": "x", "issuer": w.up.Issuer,
			"clientId": "c", "clientSecret": "s"}).Expect(t, 404, map[string]any{"code": "org_not_found"})
		if n := len(w.do(http.MethodGet, conns, nil).Expect(t, 200, nil)["connections"].([]any)); n != 0 {
			t.Fatalf("refused bodies made %d connections", n)
		}

		c := w.connect(t, acme, "Acme Okta")
		list := w.do(http.MethodGet, conns, nil).Expect(t, 200, nil)["connections"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["id"] != c.ID {
			t.Fatalf("list %v", list)
		}
		if n := len(w.do(http.MethodGet, w.orgs()+"/"+globex+"/connections", nil).Expect(t, 200, nil)["connections"].([]any)); n != 0 {
			t.Fatalf("globex sees %d connections", n)
		}
		w.do(http.MethodGet, conns+"/"+c.ID, nil).Expect(t, 200, map[string]any{"id": c.ID, "orgId": acme})
		w.do(http.MethodGet, w.orgs()+"/"+globex+"/connections/"+c.ID, nil).Expect(t, 404, map[string]any{"code": "connection_not_found"})
		w.do(http.MethodPatch, w.orgs()+"/"+globex+"/connections/"+c.ID, map[string]any{"name": "stolen"}).
			Expect(t, 404, map[string]any{"code": "connection_not_found"})
		w.do(http.MethodPatch, conns+"/"+c.ID, map[string]any{"type": "oauth2"}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		w.do(http.MethodPatch, conns+"/"+c.ID, map[string]any{"name": "Acme Entra"}).Expect(t, 200, map[string]any{"name": "Acme Entra", "orgId": acme})

		// The tenant's public sign-in page does not list an org's connection.
		pub := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/providers?tenantId=" + w.project}).Expect(t, 200, nil)
		if strings.Contains(fmt.Sprint(pub), c.ID) {
			t.Fatalf("public list shows the org's connection: %v", pub)
		}

		// Another project's admin does not reach it.
		other := w.a.SignUp(t)
		w.a.Do(apptest.Req{Method: http.MethodGet, Path: conns + "/" + c.ID, Header: other.Bearer()}).Expect(t, 403, nil)

		t.Run("a test signs in once, shows the mapped attributes, and makes no one", func(t *testing.T) {
			st := w.do(http.MethodPost, conns+"/"+c.ID+"/test", nil).Expect(t, 201, nil)
			testID, u := st["testId"].(string), st["url"].(string)
			result := conns + "/" + c.ID + "/test/" + testID
			w.do(http.MethodGet, result, nil).Expect(t, 200, map[string]any{"status": "pending", "result": nil})
			w.do(http.MethodGet, w.orgs()+"/"+globex+"/connections/"+c.ID+"/test/"+testID, nil).Expect(t, 404, map[string]any{"code": "connection_not_found"})
			tester := w.account(t, "tester-"+rnd(3)+"@acme.example", true)
			who := newPerson(t)
			res := who.via(u, tester.Login)
			page := body(t, res)
			if res.StatusCode != 200 || cookie(res, "sAccessToken") != "" || !strings.Contains(page, tester.Email) || !strings.Contains(page, testID) {
				t.Fatalf("callback of a test: %d %s", res.StatusCode, page)
			}
			w.do(http.MethodGet, result, nil).Expect(t, 200, map[string]any{"status": "done",
				"result": map[string]any{"subject": tester.Login, "email": tester.Email, "emailVerified": true, "emailTrusted": true, "name": tester.Name}})
			if w.users(t, tester.Email) != 0 {
				t.Fatal("a test made an account")
			}
			// Its state is spent: the same callback again is refused.
			again, err := who.http.Get(who.Callback)
			if err != nil {
				t.Fatal(err)
			}
			if p := body(t, again); again.StatusCode != 400 || !strings.Contains(p, "invalid_state") {
				t.Fatalf("a replayed test callback: %d %s", again.StatusCode, p)
			}
			w.do(http.MethodGet, conns+"/"+c.ID+"/test/ffe_nope", nil).Expect(t, 404, map[string]any{"code": "test_not_found"})
		})

		w.do(http.MethodDelete, conns+"/"+c.ID, nil).Expect(t, 200, map[string]any{"ok": true, "id": c.ID})
		w.do(http.MethodGet, conns+"/"+c.ID, nil).Expect(t, 404, map[string]any{"code": "connection_not_found"})

		events, err := w.a.Ent.AuditEvent.Query().All(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range events {
			if e.OrgID != nil && *e.OrgID == acme && e.Metadata["providerId"] == c.ID {
				seen[e.Action] = true
			}
		}
		for _, a := range []string{"auth.provider_create", "auth.provider_update", "auth.provider_delete"} {
			if !seen[a] {
				t.Fatalf("no %s audited with the org: %v", a, seen)
			}
		}
	})
}

// An org that verified its domain and requires SSO (SPEC §26): every other way in refuses
// the domain's addresses with 403 sso_required naming the org and its connection —
// password, mailed code (whose request still answers 202, and mails nothing), passkey
// alone, the tenant's own provider, another org's connection — and the org's connection
// signs in, the new person joining the org by autoJoin. Discovery sends the address to the
// connection first.
func TestOrgSSORequiredEveryWayIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		w.do(http.MethodPut, "/v1/projects/"+w.project+"/auth/methods", map[string]any{"password": true, "emailLink": true}).Expect(t, 200, nil)
		domain := "acme-" + rnd(3) + ".example"
		acme, globex := w.newOrg(t, "Acme", domain), w.newOrg(t, "Globex")
		tenantOwn := w.addProvider(t, map[string]any{"name": "Tenant's own"})
		tenantOwn.Start = strings.Replace(tenantOwn.Start, w.a.Base, w.a.Config.PublicURL, 1)

		// Before the policy, the domain's people make every way in.
		alice := "alice-" + rnd(3) + "@" + domain
		aliceID, access := w.signUpIn(t, alice)
		passkey := w.passkeyOf(t, aliceID, access)
		bob := w.account(t, "bob-"+rnd(3)+"@"+domain, true)
		if res := newPerson(t).via(tenantOwn.Start, bob.Login); cookie(res, "sAccessToken") == "" {
			t.Fatalf("bob's first sign-in through the tenant's provider: %d %s", res.StatusCode, body(t, res))
		}
		conn := w.connect(t, acme, "Acme Okta")
		other := w.connect(t, globex, "Globex Okta")

		w.do(http.MethodPut, w.orgs()+"/"+acme+"/policy", map[string]any{"ssoRequired": true, "mfaRequired": false, "sessionMaxHours": 0,
			"revokeMintedOnDeprovision": false, "autoJoin": map[string]any{"role": "member"}}).Expect(t, 200, nil)
		want := map[string]any{"code": "sso_required", "orgId": acme, "providerId": conn.ID}
		page := func(t *testing.T, res *http.Response) {
			t.Helper()
			p := body(t, res)
			if res.StatusCode != http.StatusForbidden || cookie(res, "sAccessToken") != "" || !strings.Contains(p, "sso_required") {
				t.Fatalf("want 403 sso_required; got %d %s", res.StatusCode, p)
			}
		}

		t.Run("password", func(t *testing.T) {
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
				Body: map[string]any{"email": alice, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 403, want)
		})
		t.Run("email code: the request 202, the sign-in 403", func(t *testing.T) {
			w.mailRequest(t, alice).Expect(t, 202, nil)
			w.mailSignIn(t, map[string]any{"email": alice, "code": "123456", "tenantId": w.project}).Expect(t, 403, want)
			time.Sleep(200 * time.Millisecond)
			if n := len(w.mailsTo(alice)); n != 0 {
				t.Fatalf("%d mails sent to an address that must use its org's connection", n)
			}
			// An address elsewhere still gets its mail: the 202 is the same for both.
			elsewhere := "frank-" + rnd(3) + "@elsewhere.example"
			w.mailRequest(t, elsewhere).Expect(t, 202, nil)
			w.waitMail(t, elsewhere, 1)
		})
		t.Run("passkey alone", func(t *testing.T) {
			passkey(t).Expect(t, 403, want)
		})
		t.Run("the tenant's own provider, returning subject", func(t *testing.T) {
			page(t, newPerson(t).via(tenantOwn.Start, bob.Login))
		})
		t.Run("another org's connection", func(t *testing.T) {
			// Refused before ssoRequired is asked: another org's connection does not vouch
			// for an address of a domain it did not prove.
			carol := w.account(t, "carol-"+rnd(3)+"@"+domain, true)
			res := newPerson(t).via(other.Start, carol.Login)
			if p := body(t, res); res.StatusCode != http.StatusForbidden || cookie(res, "sAccessToken") != "" {
				t.Fatalf("want 403; got %d %s", res.StatusCode, p)
			}
			if w.users(t, carol.Email) != 0 {
				t.Fatal("another org's connection made an account in the domain")
			}
		})
		t.Run("discovery sends the address to the org's connection", func(t *testing.T) {
			w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/providers/discover?tenantId=" + w.project + "&email=someone@" + domain}).
				Expect(t, 200, map[string]any{"providerId": conn.ID, "orgId": acme, "ssoRequired": true, "startUrl": conn.Start})
		})
		t.Run("the org's connection signs in, and autoJoin makes a member", func(t *testing.T) {
			dave := w.account(t, "dave-"+rnd(3)+"@"+domain, true)
			res := newPerson(t).via(conn.Start, dave.Login)
			if cookie(res, "sAccessToken") == "" {
				t.Fatalf("%d %s", res.StatusCode, body(t, res))
			}
			u, err := w.a.Ent.User.Query().All(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			daveID := ""
			for _, x := range u {
				if x.Email == dave.Email {
					daveID = x.ID
				}
			}
			if daveID == "" || w.members(t, acme, daveID) != 1 || w.members(t, globex, daveID) != 0 {
				t.Fatalf("dave %q is not exactly a member of acme", daveID)
			}
			// A member of two orgs starts in none, unless the way in names one: through an
			// org's connection, the session starts in that org.
			w.do(http.MethodPost, w.orgs()+"/"+globex+"/members", map[string]any{"userId": daveID, "role": "admin"}).Expect(t, 201, nil)
			again := newPerson(t).via(conn.Start, dave.Login)
			me := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/session/me", Header: bearer(cookie(again, "sAccessToken"))}).Expect(t, 200, nil)
			if p := me["accessTokenPayload"].(map[string]any); p["org_id"] != acme || p["org_role"] != "member" {
				t.Fatalf("the session through acme's connection: %v", p)
			}
			// Addresses of other domains keep every way in.
			outside := w.account(t, "erin-"+rnd(3)+"@elsewhere.example", true)
			if res := newPerson(t).via(tenantOwn.Start, outside.Login); cookie(res, "sAccessToken") == "" {
				t.Fatalf("%d %s", res.StatusCode, body(t, res))
			}
		})
		t.Run("ssoRequired off: the other ways in again, sessions capped by sessionMaxHours", func(t *testing.T) {
			w.do(http.MethodPut, w.orgs()+"/"+acme+"/policy", map[string]any{"ssoRequired": false, "mfaRequired": false, "sessionMaxHours": 2,
				"revokeMintedOnDeprovision": false, "autoJoin": map[string]any{"role": "member"}}).Expect(t, 200, nil)
			// Alice's password is a first step again (her passkey is the second).
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
				Body: map[string]any{"email": alice, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 200, map[string]any{"mfaRequired": true})
			lives := func(handle string) time.Duration {
				s, err := w.a.Ent.Session.Get(t.Context(), handle)
				if err != nil {
					t.Fatal(err)
				}
				return s.ExpiresAt.Sub(s.CreatedAt)
			}
			// Another domain's address keeps the project's own lifetime.
			up := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup",
				Body: map[string]any{"email": "henry-" + rnd(3) + "@elsewhere.example", "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 201, nil)
			if d := lives(up["session"].(map[string]any)["sessionHandle"].(string)); d != w.a.Config.RefreshTTL || d <= 2*time.Hour {
				t.Fatalf("a session of another domain lives %v, want the project's %v", d, w.a.Config.RefreshTTL)
			}
			// A mailed proof of a new address in the domain makes the person, who joins by autoJoin.
			grace := "grace-" + rnd(3) + "@" + domain
			w.mailRequest(t, grace).Expect(t, 202, nil)
			code, _ := w.waitMail(t, grace, 1)
			signed := w.mailSignIn(t, map[string]any{"email": grace, "code": code, "tenantId": w.project}).Expect(t, 200, nil)
			graceID := signed["user"].(map[string]any)["id"].(string)
			if w.members(t, acme, graceID) != 1 {
				t.Fatal("a mailed proof in the org's domain did not autoJoin")
			}
			if d := lives(signed["session"].(map[string]any)["sessionHandle"].(string)); d != 2*time.Hour {
				t.Fatalf("a session of the org's domain lives %v, want the policy's 2h", d)
			}
			// Discovery still sends the domain to the org's connection, not required now.
			w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/providers/discover?tenantId=" + w.project + "&email=someone@" + domain}).
				Expect(t, 200, map[string]any{"providerId": conn.ID, "ssoRequired": false})
		})
	})
}

// An org's connection is its customer's own identity provider, which the customer's
// admins add: it vouches only for addresses of the domains that org proved. Saying that
// a project admin's, another org's or anyone's address is verified signs nobody in,
// links nothing and makes no account (an attacker's review found it took over accounts).
func TestOrgConnectionVouchesOnlyForItsDomains(t *testing.T) {
	w := newOrgWorld(t, apptest.Stores(t)[0])
	domain, other := "acme-"+rnd(3)+".example", "globex-"+rnd(3)+".example"
	acme := w.newOrg(t, "Acme", domain)
	w.newOrg(t, "Globex", other)
	conn := w.connect(t, acme, "Acme Okta")
	for _, victim := range []string{"boss-" + rnd(3) + "@" + other, "someone-" + rnd(3) + "@elsewhere.example"} {
		victimID, _ := w.signUpIn(t, victim)
		w.verifyEmail(t, victimID)
		forged := w.account(t, victim, true)
		res := newPerson(t).via(conn.Start, forged.Login)
		if cookie(res, "sAccessToken") != "" || w.identities(t, victimID) != 0 {
			t.Fatalf("acme's connection signed in as %s: %d %s", victim, res.StatusCode, body(t, res))
		}
		stranger := w.account(t, "new-"+rnd(3)+"@"+other, true)
		if res := newPerson(t).via(conn.Start, stranger.Login); cookie(res, "sAccessToken") != "" || w.users(t, stranger.Email) != 0 {
			t.Fatalf("acme's connection made an account at another org's domain: %d", res.StatusCode)
		}
	}
	// Its own domain's people still sign in.
	own := w.account(t, "erin-"+rnd(3)+"@"+domain, true)
	if res := newPerson(t).via(conn.Start, own.Login); cookie(res, "sAccessToken") == "" {
		t.Fatalf("acme's own person: %d %s", res.StatusCode, body(t, res))
	}
}
