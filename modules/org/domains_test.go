package org_test

import (
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/orgdomain"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/identity"
)

// zone is a real DNS server on loopback answering TXT queries from a map the test
// changes; the app asks it through AUTHCORE_DNS_RESOLVER.
type zone struct {
	addr string
	mu   sync.Mutex
	txt  map[string][]string // name without the final dot → its TXT records
}

func startZone(t *testing.T) *zone {
	t.Helper()
	z := &zone{txt: map[string][]string{}}
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
		values, ok := z.txt[strings.TrimSuffix(strings.ToLower(q.Name), ".")]
		z.mu.Unlock()
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		for _, v := range values {
			if q.Qtype == dns.TypeTXT {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
			}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return z
}

func (z *zone) set(name string, values ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if values == nil {
		delete(z.txt, name)
		return
	}
	z.txt[name] = values
}

// world is the app with its own mail catcher and DNS server, a project and its admin.
type world struct {
	a       *apptest.App
	inbox   *testkit.Inbox
	zone    *zone
	admin   *apptest.Session
	project string
	do      func(method, path string, body any) *apptest.Response
	domains identity.OrgDomains
}

func newWorld(t *testing.T, st apptest.Store) *world {
	t.Helper()
	w := &world{inbox: testkit.StartInbox(t), zone: startZone(t)}
	w.a = apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) {
		c.SMTPURL = w.inbox.URL
		c.DNSResolver = w.zone.addr
	}), apptest.WithFx(fx.Populate(&w.domains)))
	w.admin = w.a.SignUp(t)
	w.project = w.a.CreateProject(t, w.admin)
	w.do = as(w.a, w.admin)
	return w
}

// signIn gives the admin a fresh session, after the clock ran past theirs.
func (w *world) signIn(t *testing.T) {
	t.Helper()
	s := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": w.admin.Email, "password": w.admin.Password}}).Expect(t, 200, nil)
	w.admin.AccessToken = s["session"].(map[string]any)["accessToken"].(string)
}

func (w *world) org(t *testing.T, project, name string) string {
	t.Helper()
	return w.do(http.MethodPost, orgsPath(project), map[string]any{"name": name}).Expect(t, 201, nil)["id"].(string)
}

var sixDigits = regexp.MustCompile(`\b(\d{6})\b`)

// codeIn is the code of the n-th mail (from 1), which must have gone to addr.
func (w *world) codeIn(t *testing.T, n int, addr string) string {
	t.Helper()
	m := w.inbox.Wait(t, n)[n-1]
	if m.To != addr {
		t.Fatalf("mail %d went to %q, want %q", n, m.To, addr)
	}
	code := sixDigits.FindStringSubmatch(m.Text)
	if code == nil || !strings.Contains(m.HTML, code[1]) {
		t.Fatalf("no code in mail %d: %s", n, m.Text)
	}
	return code[1]
}

// An org proves a domain by its TXT record or by a code mailed to an administrative
// address; a domain is verified by at most one org of a project, any number of projects.
func TestDomains(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		acme, globex := w.org(t, w.project, "Acme"), w.org(t, w.project, "Globex")
		acmeDomains := orgsPath(w.project) + "/" + acme + "/domains"
		globexDomains := orgsPath(w.project) + "/" + globex + "/domains"

		// DNS: the record must exist and hold this claim's value.
		claim := w.do(http.MethodPost, acmeDomains, map[string]any{"domain": "acme.example", "method": "dns"}).
			Expect(t, 201, map[string]any{"domain": "acme.example", "status": "pending", "method": "dns"})
		rec := claim["dnsRecord"].(map[string]any)
		if rec["name"] != "_authcore-challenge.acme.example" || rec["type"] != "TXT" || len(rec["value"].(string)) < 20 {
			t.Fatalf("dnsRecord %v", rec)
		}
		value := rec["value"].(string)
		verify := acmeDomains + "/acme.example/verify"
		t.Run("record missing", func(t *testing.T) {
			w.do(http.MethodPost, verify, nil).Expect(t, 400, map[string]any{"code": "domain_not_proven"})
		})
		t.Run("record with another value", func(t *testing.T) {
			w.zone.set("_authcore-challenge.acme.example", "not-the-value", value+"x")
			w.do(http.MethodPost, verify, map[string]any{}).Expect(t, 400, map[string]any{"code": "domain_not_proven"})
		})
		t.Run("a code for a DNS claim", func(t *testing.T) {
			issuesName(t, w.do(http.MethodPost, verify, map[string]any{"code": "123456"}), "code")
		})
		w.zone.set("_authcore-challenge.acme.example", "v=spf1 -all", value)
		got := w.do(http.MethodPost, verify, nil).Expect(t, 200, map[string]any{"domain": "acme.example", "status": "verified", "expiresAt": nil})
		if got["verifiedAt"] == nil {
			t.Errorf("verified without verifiedAt: %v", got)
		}
		w.do(http.MethodPost, verify, nil).Expect(t, 200, map[string]any{"status": "verified"}) // again: as it is

		// Another org of the project cannot claim it, nor verify a claim made before.
		w.do(http.MethodPost, globexDomains, map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 409, map[string]any{"code": "domain_taken"})
		shared := w.do(http.MethodPost, globexDomains, map[string]any{"domain": "shared.example", "method": "dns"}).Expect(t, 201, nil)
		mine := w.do(http.MethodPost, acmeDomains, map[string]any{"domain": "shared.example", "method": "dns"}).Expect(t, 201, nil)
		w.zone.set("_authcore-challenge.shared.example", shared["dnsRecord"].(map[string]any)["value"].(string), mine["dnsRecord"].(map[string]any)["value"].(string))
		w.do(http.MethodPost, acmeDomains+"/shared.example/verify", nil).Expect(t, 200, map[string]any{"status": "verified"})
		w.do(http.MethodPost, globexDomains+"/shared.example/verify", nil).Expect(t, 409, map[string]any{"code": "domain_taken"})

		// Email: a code to postmaster@; a missing or wrong code proves nothing.
		w.do(http.MethodPost, globexDomains, map[string]any{"domain": "globex.example", "method": "email", "email": "Postmaster@globex.example"}).
			Expect(t, 201, map[string]any{"status": "pending", "method": "email", "email": "postmaster@globex.example"})
		code := w.codeIn(t, 1, "postmaster@globex.example")
		row := w.a.Ent.OrgDomain.Query().Where(orgdomain.OrgID(globex), orgdomain.Domain("globex.example")).OnlyX(t.Context())
		if row.CodeMAC == nil || strings.Contains(*row.CodeMAC, code) {
			t.Errorf("the code is stored as it is, or not at all: %v", row.CodeMAC)
		}
		gverify := globexDomains + "/globex.example/verify"
		t.Run("no code", func(t *testing.T) {
			w.do(http.MethodPost, gverify, nil).Expect(t, 400, map[string]any{"code": "domain_not_proven"})
		})
		t.Run("wrong code", func(t *testing.T) {
			w.do(http.MethodPost, gverify, map[string]any{"code": wrong(code)}).Expect(t, 400, map[string]any{"code": "domain_not_proven", "attemptsLeft": float64(4)})
		})
		w.do(http.MethodPost, gverify, map[string]any{"code": code}).Expect(t, 200, map[string]any{"status": "verified", "method": "email"})
		if row := w.a.Ent.OrgDomain.GetX(t.Context(), row.ID); row.CodeMAC != nil {
			t.Errorf("a verified claim keeps its code's MAC")
		}

		// Five wrong codes end a claim: the right one proves nothing after them.
		w.do(http.MethodPost, globexDomains, map[string]any{"domain": "hooli.example", "method": "email", "email": "hostmaster@hooli.example"}).Expect(t, 201, nil)
		code = w.codeIn(t, 2, "hostmaster@hooli.example")
		t.Run("code attempts exhausted", func(t *testing.T) {
			for i := 4; i >= 0; i-- {
				w.do(http.MethodPost, globexDomains+"/hooli.example/verify", map[string]any{"code": wrong(code)}).
					Expect(t, 400, map[string]any{"code": "domain_not_proven", "attemptsLeft": float64(i)})
			}
			w.do(http.MethodPost, globexDomains+"/hooli.example/verify", map[string]any{"code": code}).Expect(t, 400, map[string]any{"code": "domain_not_proven"})
		})
		t.Run("parallel guesses are counted too", func(t *testing.T) {
			w.do(http.MethodPost, globexDomains, map[string]any{"domain": "parallel.example", "method": "email", "email": "admin@parallel.example"}).Expect(t, 201, nil)
			code := w.codeIn(t, 3, "admin@parallel.example")
			var wg sync.WaitGroup
			answers := make([]map[string]any, 12)
			for i := range answers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					answers[i] = w.do(http.MethodPost, globexDomains+"/parallel.example/verify", map[string]any{"code": wrong(code)}).JSON(t)
				}()
			}
			wg.Wait()
			compared := 0
			for _, a := range answers {
				if a["why"] == "wrong code" {
					compared++
				}
			}
			if compared > 5 {
				t.Errorf("%d of 12 parallel guesses were compared, want at most 5", compared)
			}
			w.do(http.MethodPost, globexDomains+"/parallel.example/verify", map[string]any{"code": code}).Expect(t, 400, map[string]any{"code": "domain_not_proven"})
		})
		// A claim whose codes are used up is renewed an hour after it was made, not sooner:
		// each renewal mails five more guesses.
		w.do(http.MethodPost, globexDomains, map[string]any{"domain": "hooli.example", "method": "email", "email": "webmaster@hooli.example"}).
			Expect(t, 429, map[string]any{"code": "too_many_attempts"})
		w.a.Clock.Advance(time.Hour)
		w.signIn(t)
		w.do(http.MethodPost, globexDomains, map[string]any{"domain": "hooli.example", "method": "email", "email": "webmaster@hooli.example"}).Expect(t, 201, nil)
		w.do(http.MethodPost, globexDomains+"/hooli.example/verify", map[string]any{"code": w.codeIn(t, 4, "webmaster@hooli.example")}).Expect(t, 200, map[string]any{"status": "verified"})
		// Within the hour, renewing keeps the count of codes tried.
		t.Run("renewing keeps the codes tried", func(t *testing.T) {
			renew := func() {
				w.do(http.MethodPost, globexDomains, map[string]any{"domain": "renew.example", "method": "email", "email": "admin@renew.example"}).Expect(t, 201, nil)
			}
			renew()
			w.do(http.MethodPost, globexDomains+"/renew.example/verify", map[string]any{"code": wrong(w.codeIn(t, 5, "admin@renew.example"))}).
				Expect(t, 400, map[string]any{"attemptsLeft": float64(4)})
			// A code mailed is not mailed again within five minutes.
			w.do(http.MethodPost, globexDomains, map[string]any{"domain": "renew.example", "method": "email", "email": "admin@renew.example"}).
				Expect(t, 429, map[string]any{"code": "too_many_attempts"})
			w.a.Clock.Advance(5*time.Minute + time.Second)
			w.signIn(t)
			renew()
			w.do(http.MethodPost, globexDomains+"/renew.example/verify", map[string]any{"code": wrong(w.codeIn(t, 6, "admin@renew.example"))}).
				Expect(t, 400, map[string]any{"attemptsLeft": float64(3)})
			w.do(http.MethodDelete, globexDomains+"/renew.example", nil).Expect(t, 200, nil)
		})

		list := w.do(http.MethodGet, acmeDomains, nil).Expect(t, 200, nil)["domains"].([]any)
		if len(list) != 2 || list[0].(map[string]any)["domain"] != "acme.example" || list[1].(map[string]any)["status"] != "verified" {
			t.Errorf("acme's domains: %v", list)
		}
		glist := w.do(http.MethodGet, globexDomains, nil).Expect(t, 200, nil)["domains"].([]any)
		if len(glist) != 3 { // globex.example, hooli.example and the pending shared.example (parallel.example lapsed)
			t.Errorf("globex's domains: %v", glist)
		}

		// The same domain in another project is that project's business.
		other := w.a.SignUp(t)
		otherProject := w.a.CreateProject(t, other)
		odo := as(w.a, other)
		initech := odo(http.MethodPost, orgsPath(otherProject), map[string]any{"name": "Initech"}).Expect(t, 201, nil)["id"].(string)
		oclaim := odo(http.MethodPost, orgsPath(otherProject)+"/"+initech+"/domains", map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 201, nil)
		w.zone.set("_authcore-challenge.acme.example", value, oclaim["dnsRecord"].(map[string]any)["value"].(string))
		odo(http.MethodPost, orgsPath(otherProject)+"/"+initech+"/domains/acme.example/verify", nil).Expect(t, 200, map[string]any{"status": "verified"})

		// Once dropped, the domain is free for another org of the project.
		w.do(http.MethodDelete, acmeDomains+"/acme.example", nil).Expect(t, 200, map[string]any{"ok": true, "domain": "acme.example"})
		w.do(http.MethodDelete, acmeDomains+"/acme.example", nil).Expect(t, 404, nil)
		g := w.do(http.MethodPost, globexDomains, map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 201, nil)
		w.zone.set("_authcore-challenge.acme.example", g["dnsRecord"].(map[string]any)["value"].(string))
		w.do(http.MethodPost, globexDomains+"/acme.example/verify", nil).Expect(t, 200, map[string]any{"status": "verified"})
		// Deleting an org frees its domains too.
		w.do(http.MethodDelete, orgsPath(w.project)+"/"+acme, nil).Expect(t, 200, nil)
		if n := w.a.Ent.OrgDomain.Query().Where(orgdomain.OrgID(acme)).CountX(t.Context()); n != 0 {
			t.Errorf("%d domains outlive their org", n)
		}

		actions := auditActions(t, w.a, w.admin, w.project)
		for _, want := range []string{"org.domain_add", "org.domain_verify", "org.domain_remove"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit has no %s: %s", want, actions)
			}
		}
		for _, m := range w.inbox.Mails() {
			if strings.Contains(w.a.Logs.String(), sixDigits.FindString(m.Text)) {
				t.Errorf("a mailed code is in the logs")
			}
		}
	})
}

// wrong is a code that is not code.
func wrong(code string) string {
	if code == "000000" {
		return "000001"
	}
	return "000000"
}

// Another project's admin neither sees nor touches an org's domains and policy.
func TestDomainsAreTheProjectAdmins(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		acme := w.org(t, w.project, "Acme")
		one := orgsPath(w.project) + "/" + acme
		w.do(http.MethodPost, one+"/domains", map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 201, nil)

		other := w.a.SignUp(t)
		otherProject := w.a.CreateProject(t, other)
		odo := as(w.a, other)
		policy := map[string]any{"ssoRequired": true, "mfaRequired": true, "sessionMaxHours": 1, "revokeMintedOnDeprovision": true}
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, one + "/domains", nil},
			{http.MethodPost, one + "/domains", map[string]any{"domain": "evil.example", "method": "dns"}},
			{http.MethodPost, one + "/domains/acme.example/verify", nil},
			{http.MethodDelete, one + "/domains/acme.example", nil},
			{http.MethodGet, one + "/policy", nil},
			{http.MethodPut, one + "/policy", policy},
		} {
			odo(r.method, r.path, r.body).Expect(t, 403, nil)
			// Through their own project, the org is not found.
			odo(r.method, strings.Replace(r.path, w.project, otherProject, 1), r.body).Expect(t, 404, map[string]any{"code": "not_found"})
		}
		// A developer of the project is no admin.
		dev := w.a.SignUp(t)
		w.a.AddMember(t, w.admin, w.project, dev, "developer")
		as(w.a, dev)(http.MethodGet, one+"/domains", nil).Expect(t, 403, nil)
		as(w.a, dev)(http.MethodPost, one+"/domains", map[string]any{"domain": "dev.example", "method": "dns"}).Expect(t, 403, nil)
		as(w.a, dev)(http.MethodPut, one+"/policy", policy).Expect(t, 403, nil)
		if n := w.a.Ent.OrgDomain.Query().Where(orgdomain.ProjectID(w.project)).CountX(t.Context()); n != 1 {
			t.Errorf("%d claims after another project's attempts, want 1", n)
		}
		w.do(http.MethodGet, one+"/policy", nil).Expect(t, 200, map[string]any{"ssoRequired": false, "sessionMaxHours": float64(0)})
	})
}

// Each rule of a claim's body has its own case; a refused claim stores nothing.
func TestDomainRefusals(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	domains := orgsPath(w.project) + "/" + w.org(t, w.project, "Acme") + "/domains"
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing body", nil, "body"},
		{"an array", []any{}, "body"},
		{"no domain", map[string]any{"method": "dns"}, "domain"},
		{"domain not a string", map[string]any{"domain": 1, "method": "dns"}, "domain"},
		{"domain upper case", map[string]any{"domain": "Acme.example", "method": "dns"}, "domain"},
		{"domain one label", map[string]any{"domain": "localhost", "method": "dns"}, "domain"},
		{"domain 254 characters", map[string]any{"domain": strings.Repeat("a.", 125) + "abcd", "method": "dns"}, "domain"},
		{"domain with a path", map[string]any{"domain": "acme.example/x", "method": "dns"}, "domain"},
		{"a shared mail domain", map[string]any{"domain": "gmail.com", "method": "dns"}, "domain"},
		{"no method", map[string]any{"domain": "acme.example"}, "method"},
		{"unknown method", map[string]any{"domain": "acme.example", "method": "http"}, "method"},
		{"email without an address", map[string]any{"domain": "acme.example", "method": "email"}, "email"},
		{"address not administrative", map[string]any{"domain": "acme.example", "method": "email", "email": "ceo@acme.example"}, "email"},
		{"address at another domain", map[string]any{"domain": "acme.example", "method": "email", "email": "admin@other.example"}, "email"},
		{"address at a subdomain", map[string]any{"domain": "acme.example", "method": "email", "email": "admin@mail.acme.example"}, "email"},
		{"address not an address", map[string]any{"domain": "acme.example", "method": "email", "email": "admin"}, "email"},
		{"address not a string", map[string]any{"domain": "acme.example", "method": "email", "email": 7}, "email"},
		{"address with dns", map[string]any{"domain": "acme.example", "method": "dns", "email": "admin@acme.example"}, "email"},
		{"unknown field", map[string]any{"domain": "acme.example", "method": "dns", "verified": true}, "verified"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { issuesName(t, w.do(http.MethodPost, domains, c.body), c.field) })
	}
	t.Run("verify body", func(t *testing.T) {
		w.do(http.MethodPost, domains, map[string]any{"domain": "acme.example", "method": "email", "email": "admin@acme.example"}).Expect(t, 201, nil)
		issuesName(t, w.do(http.MethodPost, domains+"/acme.example/verify", map[string]any{"code": 123456}), "code")
		issuesName(t, w.do(http.MethodPost, domains+"/acme.example/verify", map[string]any{"code": "1", "x": 1}), "x")
		w.do(http.MethodPost, domains+"/nowhere.example/verify", map[string]any{"code": "123456"}).Expect(t, 404, nil)
	})
	if n := w.a.Ent.OrgDomain.Query().Where(orgdomain.ProjectID(w.project)).CountX(t.Context()); n != 1 {
		t.Fatalf("%d claims after the refusals, want the 1 accepted", n)
	}
	if n := len(w.inbox.Wait(t, 1)); n != 1 {
		t.Errorf("%d mails, want 1", n)
	}
	if got := w.a.Ent.OrgDomain.Query().Where(orgdomain.ProjectID(w.project)).OnlyX(t.Context()); got.Attempts != 0 {
		t.Errorf("refused bodies counted as %d wrong codes", got.Attempts)
	}
}

// A pending claim lapses after 7 days: its record proves nothing then, it is no longer
// listed, and claiming again renews it.
func TestDomainClaimsLapse(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		domains := orgsPath(w.project) + "/" + w.org(t, w.project, "Acme") + "/domains"
		claim := w.do(http.MethodPost, domains, map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 201, nil)
		w.zone.set("_authcore-challenge.acme.example", claim["dnsRecord"].(map[string]any)["value"].(string))

		w.a.Clock.Advance(7*24*time.Hour + time.Second)
		w.signIn(t)
		do := w.do
		do(http.MethodPost, domains+"/acme.example/verify", nil).Expect(t, 400, map[string]any{"code": "domain_not_proven"})
		if got := do(http.MethodGet, domains, nil).Expect(t, 200, nil)["domains"].([]any); len(got) != 0 {
			t.Errorf("a lapsed claim is listed: %v", got)
		}
		renewed := do(http.MethodPost, domains, map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 201, map[string]any{"status": "pending"})
		value := renewed["dnsRecord"].(map[string]any)["value"].(string)
		if value == claim["dnsRecord"].(map[string]any)["value"] {
			t.Errorf("a renewed claim keeps its TXT value")
		}
		w.zone.set("_authcore-challenge.acme.example", value)
		do(http.MethodPost, domains+"/acme.example/verify", nil).Expect(t, 200, map[string]any{"status": "verified"})
	})
}

// Two orgs proving one domain at once: exactly one holds it verified, the other is told
// domain_taken.
func TestDomainVerifiedByOneOrgUnderRaces(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		for round := range 3 {
			domain := "race" + string(rune('a'+round)) + ".example"
			var paths, values []string
			for i := range 2 {
				path := orgsPath(w.project) + "/" + w.org(t, w.project, domain+string(rune('a'+i))) + "/domains"
				c := w.do(http.MethodPost, path, map[string]any{"domain": domain, "method": "dns"}).Expect(t, 201, nil)
				paths, values = append(paths, path), append(values, c["dnsRecord"].(map[string]any)["value"].(string))
			}
			w.zone.set("_authcore-challenge."+domain, values...)
			statuses := make([]int, 2)
			var wg sync.WaitGroup
			for i := range paths {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = w.do(http.MethodPost, paths[i]+"/"+domain+"/verify", nil).Status
				}()
			}
			wg.Wait()
			if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
				t.Errorf("%s: verifications answered %v, want one 200 and one 409", domain, statuses)
			}
			if n := w.a.Ent.OrgDomain.Query().Where(orgdomain.ProjectID(w.project), orgdomain.Domain(domain), orgdomain.VerifiedAtNotNil()).CountX(t.Context()); n != 1 {
				t.Errorf("%s verified by %d orgs", domain, n)
			}
		}
	})
}

// Without mail, a code cannot be sent: the claim by mail is refused (and stores nothing),
// the claim by DNS still works.
func TestDomainByMailNeedsMail(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	do := as(a, admin)
	domains := orgsPath(project) + "/" + do(http.MethodPost, orgsPath(project), map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string) + "/domains"
	do(http.MethodPost, domains, map[string]any{"domain": "acme.example", "method": "email", "email": "admin@acme.example"}).
		Expect(t, 503, map[string]any{"code": "mail_not_configured"})
	if n := a.Ent.OrgDomain.Query().Where(orgdomain.ProjectID(project)).CountX(t.Context()); n != 0 {
		t.Errorf("%d claims stored", n)
	}
	do(http.MethodPost, domains, map[string]any{"domain": "acme.example", "method": "dns"}).Expect(t, 201, map[string]any{"status": "pending"})
}
