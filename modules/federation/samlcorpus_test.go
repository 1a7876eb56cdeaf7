package federation_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/ent/session"
	"github.com/authcore/authcore/ent/usedassertion"
	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/samlcorpus"
	"github.com/authcore/authcore/platform/config"
)

// corpusWorld is one app with an org whose domain is proven, two SAML connections to
// crewjam's IdP (one that allows IdP-initiated sign-in), and a victim who signed in
// through the first once, so that a forgery naming them has someone to become.
type corpusWorld struct {
	*orgWorld
	org, domain string
	idp         *samlcorpus.IdP
	conn, open  corpusConn
	victim      samlcorpus.Person
}

type corpusConn struct {
	ID, Login, ACS string
	Metadata       []byte
}

func newCorpusWorld(t *testing.T, st apptest.Store) *corpusWorld {
	t.Helper()
	// As newOrgWorld, with no sign-in budget: the corpus starts some eighty sign-ins from
	// one address, and the budget has tests of its own.
	z := startTXTZone(t)
	ow := &orgWorld{zone: z, world: newWorld(t, st, apptest.WithConfig(func(c *config.Config) {
		_, port, _ := net.SplitHostPort(c.Addr)
		c.PublicURL = "http://localhost:" + port
		c.DNSResolver = z.addr
		c.RateLimit = 0
	}))}
	w := &corpusWorld{orgWorld: ow, domain: "acme-" + rnd(3) + ".example"}
	w.org = w.newOrg(t, "Acme", w.domain)
	idp, err := samlcorpus.NewIdP("https://idp-"+rnd(3)+".example/metadata", "https://idp.example/sso")
	if err != nil {
		t.Fatal(err)
	}
	w.idp = idp
	w.conn = w.corpusConnect(t, false)
	w.open = w.corpusConnect(t, true)
	w.victim = samlcorpus.Person{Email: "victim@" + w.domain, First: "Vic", Last: "Tim"}
	// The victim's first sign-in, the IdP's response untouched: also the control that a
	// stock crewjam IdP's answer is taken.
	b := newCorpusBrowser(t)
	f := w.start(t, b, w.conn)
	form, err := w.idp.Plain(f, w.victim)
	if err != nil {
		t.Fatal(err)
	}
	if res := b.post(t, f.ACS, form); res.status != http.StatusFound || w.users(t, w.victim.Email) != 1 {
		t.Fatalf("the victim's own sign-in: %d %s", res.status, res.body)
	}
	return w
}

func (w *corpusWorld) corpusConnect(t *testing.T, allowIdpInitiated bool) corpusConn {
	t.Helper()
	meta, err := w.idp.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	got := w.do(http.MethodPost, w.orgs()+"/"+w.org+"/connections", map[string]any{"type": "saml", "name": "Acme SAML",
		"metadataXml": string(meta), "allowIdpInitiated": allowIdpInitiated,
		"attributeMapping": map[string]any{"email": samlcorpus.AttrEmail, "firstName": samlcorpus.AttrFirst,
			"lastName": samlcorpus.AttrLast, "groups": samlcorpus.AttrGroups}}).Expect(t, 201, map[string]any{"type": "saml"})
	c := corpusConn{ID: got["id"].(string), Login: got["loginUrl"].(string), ACS: got["acsUrl"].(string)}
	res, err := http.Get(got["metadataUrl"].(string))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if c.Metadata, _ = io.ReadAll(res.Body); res.StatusCode != http.StatusOK {
		t.Fatalf("SP metadata: %d %s", res.StatusCode, c.Metadata)
	}
	return c
}

// corpusBrowser is a person's browser without a browser: its own cookie jar, redirects
// not followed, answers asked for as JSON so that a refusal names its code.
type corpusBrowser struct{ http *http.Client }

func newCorpusBrowser(t testing.TB) *corpusBrowser {
	jar, _ := cookiejar.New(nil)
	return &corpusBrowser{http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type corpusAnswer struct {
	status   int
	body     string
	code     string
	location string
}

func (b *corpusBrowser) post(t testing.TB, acs string, form url.Values) corpusAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, acs, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", acs, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := corpusAnswer{status: res.StatusCode, body: string(raw), location: res.Header.Get("Location")}
	var e struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(raw, &e) == nil {
		out.code = e.Code
	}
	return out
}

// start is an SP-initiated sign-in in browser b through c, up to the IdP having read and
// accepted its signed AuthnRequest.
func (w *corpusWorld) start(t testing.TB, b *corpusBrowser, c corpusConn) *samlcorpus.Flow {
	t.Helper()
	res, err := b.http.Get(c.Login + "?redirect=" + url.QueryEscape("/console"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusFound && res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	f, err := w.idp.Receive(res.Header.Get("Location"), c.Metadata, w.a.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// corpusTraces counts what a sign-in leaves: people, identities, org members, sessions,
// audit records other than refusals, and spent SAML assertion IDs (a refused response's
// must stay unspent, or anyone could burn the IDs of assertions in flight).
type corpusTraces struct{ users, identities, members, sessions, audits, spent int }

func (w *corpusWorld) traces(t testing.TB) corpusTraces {
	t.Helper()
	ctx := t.Context()
	var out corpusTraces
	out.users = w.a.Ent.User.Query().Where(user.TenantID(w.project)).CountX(ctx)
	out.identities = w.a.Ent.Identity.Query().Where(identity.TenantID(w.project)).CountX(ctx)
	out.members = w.a.Ent.OrgMember.Query().Where(orgmember.OrgID(w.org)).CountX(ctx)
	out.sessions = w.a.Ent.Session.Query().Where(session.TenantID(w.project)).CountX(ctx)
	out.spent = w.a.Ent.UsedAssertion.Query().Where(usedassertion.IssuerIn("saml:"+w.conn.ID, "saml:"+w.open.ID)).CountX(ctx)
	for _, a := range w.a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(w.project)).Select(auditevent.FieldAction).StringsX(ctx) {
		if !strings.Contains(a, "fail") && !strings.Contains(a, "refus") && !strings.Contains(a, "reject") {
			out.audits++
		}
	}
	return out
}

// TestSAMLCorpus posts every case of the corpus (internal/samlcorpus/corpus/*.json) to the
// real ACS: each forgery is refused with the status and code it names and leaves nothing
// behind; each accepted control signs its person in. Every case runs on SQLite; those
// marked "stores": "both" on PostgreSQL too.
func TestSAMLCorpus(t *testing.T) {
	cases, err := samlcorpus.Load()
	if err != nil {
		t.Fatal(err)
	}
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newCorpusWorld(t, st)
		for _, c := range cases {
			if st.Name != "sqlite" && c.Stores != "both" {
				continue
			}
			t.Run(c.Name, func(t *testing.T) { w.run(t, c) })
		}
	})
}

func (w *corpusWorld) run(t *testing.T, c samlcorpus.Case) {
	conn := w.conn
	if c.AllowIdpInitiated {
		conn = w.open
	}
	person := samlcorpus.Person{Email: "employee-" + rnd(4) + "@" + w.domain, First: "Em", Last: "Ployee", Groups: []string{"eng"}}
	opts := samlcorpus.Options{Person: person, Victim: w.victim, Now: w.a.Clock.Now()}
	b := newCorpusBrowser(t)
	var f *samlcorpus.Flow
	switch c.Flow {
	case "":
		f = w.start(t, b, conn)
	case "other-connection":
		f = w.start(t, b, conn)
		conn = w.open
	case "other-browser":
		w.start(t, b, conn) // this browser has a flow of its own, which the post does not name
		f = w.start(t, newCorpusBrowser(t), conn)
	case "stolen":
		f = w.start(t, newCorpusBrowser(t), conn)
	case "unsolicited":
		var err error
		if f, err = w.idp.Unsolicited(conn.Metadata, opts.Now); err != nil {
			t.Fatal(err)
		}
	}
	post, err := w.idp.Build(f, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Flow == "other-connection" || c.Flow == "stolen" {
		post.Form.Del("RelayState")
	}
	if c.Replay {
		if res := b.post(t, conn.ACS, post.Form); res.status != http.StatusFound {
			t.Fatalf("the first post was refused: %d %s", res.status, res.body)
		}
	}
	before := w.traces(t)
	res := b.post(t, conn.ACS, post.Form)
	after := w.traces(t)
	if c.Expect == "accepted" {
		if res.status != http.StatusFound || res.location == "" {
			t.Fatalf("refused: %d %s", res.status, res.body)
		}
		if after.sessions != before.sessions+1 || w.users(t, person.Email) != 1 {
			t.Fatalf("accepted without signing %s in: %+v -> %+v", person.Email, before, after)
		}
		return
	}
	if res.status < 400 || res.status >= 500 {
		t.Fatalf("not refused as a client's mistake: %d %s", res.status, res.body)
	}
	if c.Status != 0 && res.status != c.Status {
		t.Errorf("status %d, want %d: %s", res.status, c.Status, res.body)
	}
	if c.Code != "" && res.code != c.Code {
		t.Errorf("code %q, want %q: %s", res.code, c.Code, res.body)
	}
	t.Logf("refused: %d %s", res.status, res.code)
	if c.Library == "accepts" && after.spent == before.spent+1 {
		// A response crewjam accepts carries a valid assertion, refused afterwards by a rule
		// of ours (the org's domains): spending its ID is right, it was the IdP's.
		after.spent = before.spent
	}
	if after != before {
		t.Fatalf("a refused response left traces: %+v -> %+v", before, after)
	}
	if c.NotBurnt && post.AssertionID != "" {
		// The refused response's assertion ID is not spent: a valid response that carries
		// it, for a new request, is still taken.
		b2 := newCorpusBrowser(t)
		f2 := w.start(t, b2, conn)
		valid, err := w.idp.Build(f2, samlcorpus.Case{Name: "valid"}, samlcorpus.Options{Person: person, Victim: w.victim,
			Now: w.a.Clock.Now(), AssertionID: post.AssertionID})
		if err != nil {
			t.Fatal(err)
		}
		if res := b2.post(t, conn.ACS, valid.Form); res.status != http.StatusFound {
			t.Fatalf("the refused response burnt its assertion ID: %d %s", res.status, res.body)
		}
	}
}
