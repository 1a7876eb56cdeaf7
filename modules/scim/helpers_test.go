package scim_test

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// startZone starts a real DNS server on loopback answering the TXT records the tests set;
// the app asks it through AUTHCORE_DNS_RESOLVER, so an org proves its domain as it would
// in production.
func startZone(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		recordsMu.Lock()
		v, ok := records[strings.TrimSuffix(strings.ToLower(q.Name), ".")]
		recordsMu.Unlock()
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
	return pc.LocalAddr().String()
}

// records are the TXT records every zone serves, set by world.verify.
var (
	recordsMu sync.Mutex
	records   = map[string]string{}
)

// world is the app, a project and its admin, an org (Acme) that proved acme.example by
// DNS, and one directory of Acme's.
type world struct {
	a       *apptest.App
	ent     *ent.Client
	admin   *apptest.Session
	project string
	org     string
	dir     string // the directory's id
	token   string
	base    string // /scim/v2/{dir}
}

func (w *world) do(method, path string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: w.admin.Bearer()})
}

func (w *world) dirs() string { return "/v1/projects/" + w.project + "/orgs/" + w.org + "/directories" }

func newWorld(t testing.TB, st apptest.Store, opts ...apptest.Option) *world {
	t.Helper()
	resolver := startZone(t)
	w := &world{}
	w.a = apptest.Start(t, st, append(opts, apptest.WithConfig(func(c *config.Config) { c.DNSResolver = resolver }),
		apptest.WithFx(fx.Populate(&w.ent)))...)
	w.admin = w.a.SignUp(t)
	w.project = w.a.CreateProject(t, w.admin)
	w.org = w.do(http.MethodPost, "/v1/projects/"+w.project+"/orgs", map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	w.verify(t, w.org, "acme.example")
	d := w.do(http.MethodPost, w.dirs(), map[string]any{"name": "Okta"}).Expect(t, 201, nil)
	w.dir, w.token = d["id"].(string), d["token"].(string)
	w.base = "/scim/v2/" + w.dir
	return w
}

// verify proves domain for org by its TXT record.
func (w *world) verify(t testing.TB, org, domain string) {
	t.Helper()
	domains := "/v1/projects/" + w.project + "/orgs/" + org + "/domains"
	claim := w.do(http.MethodPost, domains, map[string]any{"domain": domain, "method": "dns"}).Expect(t, 201, nil)
	rec := claim["dnsRecord"].(map[string]any)
	recordsMu.Lock()
	records[rec["name"].(string)] = rec["value"].(string)
	recordsMu.Unlock()
	w.do(http.MethodPost, domains+"/"+domain+"/verify", nil).Expect(t, 200, map[string]any{"status": "verified"})
}

// scim sends a SCIM request with the directory's token (or token, when given).
func (w *world) scim(method, path string, body any, token ...string) *apptest.Response {
	tok := w.token
	if len(token) > 0 {
		tok = token[0]
	}
	h := map[string]string{"Content-Type": "application/scim+json"}
	if tok != "" {
		h["Authorization"] = "Bearer " + tok
	}
	return w.a.Do(apptest.Req{Method: method, Path: w.base + path, Body: body, Header: h})
}

// scimError checks an RFC 7644 §3.12 body: its status and scimType ("" for none).
func scimError(t *testing.T, r *apptest.Response, status int, scimType string) {
	t.Helper()
	got := r.Expect(t, status, map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:Error"}, "status": strconv.Itoa(status)})
	if st, _ := got["scimType"].(string); st != scimType {
		t.Fatalf("scimType %q, want %q: %s", st, scimType, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/scim+json") {
		t.Fatalf("Content-Type %q", ct)
	}
}

// user is a SCIM User body for userName with a work email.
func user(userName string, extra map[string]any) map[string]any {
	u := map[string]any{
		"schemas":  []string{"urn:ietf:params:scim:schemas:core:2.0:User"},
		"userName": userName,
		"name":     map[string]any{"givenName": "Ada", "familyName": "Lovelace"},
		"emails":   []any{map[string]any{"value": userName, "type": "work", "primary": true}},
		"active":   true,
	}
	for k, v := range extra {
		u[k] = v
	}
	return u
}
