package samlcorpus

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

// memoryReplay is the smallest AssertionReplayCache, for the self-check only (the app
// keeps assertion IDs in its store).
type memoryReplay struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (m *memoryReplay) Consume(id string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[id] {
		return saml.ErrAssertionReplayed
	}
	m.seen[id] = true
	return nil
}

// strictSP is crewjam/saml's own service provider set as §27 asks, a second reader of the
// corpus next to the app's ACS: it shows that each accepted control is a valid response
// and that each refused case fails for a reader other than ours too.
func strictSP(t *testing.T, idp *IdP) *saml.ServiceProvider {
	t.Helper()
	key, cert, err := selfSigned("corpus sp")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := idp.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	var ed saml.EntityDescriptor
	if err := xml.Unmarshal(meta, &ed); err != nil {
		t.Fatal(err)
	}
	acs, _ := url.Parse("https://sp.test/saml/conn/acs")
	md, _ := url.Parse("https://sp.test/saml/conn/metadata")
	return &saml.ServiceProvider{
		EntityID: md.String(), Key: key, Certificate: cert, EncryptionKey: key, AcsURL: *acs, MetadataURL: *md,
		IDPMetadata: &ed, SignatureMethod: dsig.RSASHA256SignatureMethod, RejectSHA1Signatures: true,
		ReplayCache: &memoryReplay{seen: map[string]bool{}},
	}
}

func TestCorpusLoads(t *testing.T) {
	cases, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, c := range cases {
		if c.Expect == "refused" {
			refused++
		}
	}
	// Issue 44: at least 40 forged or wrong responses.
	if refused < 40 {
		t.Fatalf("the corpus has %d refused cases, fewer than 40", refused)
	}
	t.Logf("%d cases, %d refused", len(cases), refused)
}

// TestCorpusAgainstCrewjamSP posts nothing: it parses every case with crewjam/saml's
// service provider, so that a case that is not what it says (an accepted control that no
// SP takes, a forgery a strict SP takes) is found here, before the app's tests.
func TestCorpusAgainstCrewjamSP(t *testing.T) {
	old := saml.MaxClockSkew
	saml.MaxClockSkew = 2 * time.Minute // §27
	t.Cleanup(func() { saml.MaxClockSkew = old })
	cases, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	idp, err := NewIdP("https://idp.test/metadata", "https://idp.test/sso")
	if err != nil {
		t.Fatal(err)
	}
	sp := strictSP(t, idp)
	spMeta, err := xml.Marshal(sp.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T) *Flow {
		u, err := sp.MakeRedirectAuthenticationRequest("relay-" + newID())
		if err != nil {
			t.Fatal(err)
		}
		f, err := idp.Receive(u.String(), spMeta, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	person := Person{Email: "employee@acme.test", First: "Em", Last: "Ployee", Groups: []string{"eng"}}
	victim := Person{Email: "victim@acme.test"}
	parse := func(sp *saml.ServiceProvider, p *Post, ids []string) (*saml.Assertion, error) {
		v, ok := p.Form["SAMLResponse"]
		if !ok || v[0] == "" {
			return nil, errors.New("no SAMLResponse")
		}
		raw, err := base64.StdEncoding.DecodeString(v[0])
		if err != nil {
			return nil, err
		}
		if len(raw) > Limit { // crewjam's SP has no size bound of its own; §27 does
			return nil, errors.New("over the limit")
		}
		return sp.ParseXMLResponse(raw, ids, sp.AcsURL)
	}

	t.Run("plain crewjam IdP response", func(t *testing.T) {
		f := start(t)
		v, err := idp.Plain(f, person)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parse(sp, &Post{Form: v}, []string{f.RequestID}); err != nil {
			t.Fatalf("the IdP's own response is refused: %v", err)
		}
	})

	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			f := start(t)
			ids := []string{f.RequestID}
			switch c.Flow {
			case "other-connection":
				t.Skip("needs two connections of one IdP: TestSAMLCorpus runs it against the app")
			case "other-browser", "stolen":
				f = start(t)
			case "unsolicited":
				if f, err = idp.Unsolicited(spMeta, time.Now()); err != nil {
					t.Fatal(err)
				}
				if c.AllowIdpInitiated {
					ids = nil
				}
			}
			csp := sp
			if c.AllowIdpInitiated {
				copied := *sp
				copied.AllowIDPInitiated = true
				csp = &copied
			}
			post, err := idp.Build(f, c, Options{Person: person, Victim: victim})
			if err != nil {
				t.Fatal(err)
			}
			if c.Replay {
				if _, err := parse(csp, post, ids); err != nil {
					t.Fatalf("first post refused: %v", err)
				}
			}
			a, err := parse(csp, post, ids)
			if c.Library == "accepts" {
				if err != nil {
					t.Fatalf("crewjam's SP refused it (%v): the case no longer needs the app's own rule", describe(err))
				}
				if a.Subject.NameID.Value == victim.Email {
					t.Fatalf("crewjam's SP read the victim")
				}
				return
			}
			switch {
			case c.Expect == "accepted" && err != nil:
				t.Fatalf("refused: %v", describe(err))
			case c.Expect == "refused" && err == nil:
				t.Fatalf("accepted, as %s", a.Subject.NameID.Value)
			}
			if err != nil {
				t.Logf("refused: %v", describe(err))
			}
		})
	}
}

func describe(err error) error {
	var ire *saml.InvalidResponseError
	if errors.As(err, &ire) {
		return ire.PrivateErr
	}
	return err
}
