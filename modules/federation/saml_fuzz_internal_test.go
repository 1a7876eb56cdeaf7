package federation

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crewjam/saml"

	"github.com/authcore/authcore/internal/samlcorpus"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/secret"
)

// fuzzACS is what the ACS reads a post with, built by the ACS's own code (samlSPs.of: the
// connection's sealed key, the IdP's metadata, our clock, standing still here), one request
// of that SP read by the corpus IdP, and every corpus case built for it: the seeds.
type fuzzACS struct {
	sp        *saml.ServiceProvider
	requestID string
	seeds     []string // SAMLResponse form values
	// signed is every NameID the IdP signed for the seeds: a mutation the ACS accepts
	// must name one of them.
	signed map[string]bool
}

var (
	fuzzOnce sync.Once
	fuzzW    *fuzzACS
	fuzzErr  error
)

func fuzzWorld(t testing.TB) *fuzzACS {
	t.Helper()
	fuzzOnce.Do(func() { fuzzW, fuzzErr = newFuzzACS() })
	if fuzzErr != nil {
		t.Fatal(fuzzErr)
	}
	return fuzzW
}

func newFuzzACS() (*fuzzACS, error) {
	master, err := secret.NewMasterKey()
	if err != nil {
		return nil, err
	}
	keys, err := secret.NewKeyring(master)
	if err != nil {
		return nil, err
	}
	clk := clock.NewFake(time.Now())
	idp, err := samlcorpus.NewIdP("https://idp.fuzz.example/metadata", "https://idp.fuzz.example/sso")
	if err != nil {
		return nil, err
	}
	meta, err := idp.Metadata()
	if err != nil {
		return nil, err
	}
	const id = "sml_fuzz"
	key, der, err := newSPKey(id, clk.Now())
	if err != nil {
		return nil, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	sealed, err := sealedSAMLKey.Seal(keys, pk, id)
	if err != nil {
		return nil, err
	}
	c := samlConn{ID: id, TenantID: "prj_fuzz", OrgID: "org_fuzz", Name: "fuzz", Enabled: true, IdPMetadata: string(meta),
		IdPEntityID: "https://idp.fuzz.example/metadata", Mapping: samlMapping{Email: samlcorpus.AttrEmail},
		CreatedAt: clk.Now(), UpdatedAt: clk.Now(), ReadAt: clk.Now(), keySealed: sealed, cert: base64.StdEncoding.EncodeToString(der)}
	sp, err := newSAMLSPs(keys, clk, "https://authcore.fuzz.example").of(c)
	if err != nil {
		return nil, err
	}
	spMeta, err := xml.Marshal(sp.Metadata())
	if err != nil {
		return nil, err
	}
	u, err := sp.MakeRedirectAuthenticationRequest("relay")
	if err != nil {
		return nil, err
	}
	f, err := idp.Receive(u.String(), spMeta, clk.Now())
	if err != nil {
		return nil, err
	}
	person := samlcorpus.Person{Email: "employee@acme.example", First: "Em", Last: "Ployee"}
	victim := samlcorpus.Person{Email: "victim@acme.example"}
	w := &fuzzACS{sp: sp, requestID: f.RequestID, signed: map[string]bool{person.Email: true, victim.Email + ".evil.test": true}}
	cases, err := samlcorpus.Load()
	if err != nil {
		return nil, err
	}
	for _, cs := range cases {
		if cs.Flow != "" || cs.Pad != 0 { // other flows need other requests; padded ones are slow to mutate
			continue
		}
		post, err := idp.Build(f, cs, samlcorpus.Options{Person: person, Victim: victim, Now: clk.Now()})
		if err != nil {
			return nil, err
		}
		if v, ok := post.Form["SAMLResponse"]; ok {
			w.seeds = append(w.seeds, v[0])
		}
	}
	return w, nil
}

// FuzzSAMLResponse feeds the ACS's reading of a post (decodeSAMLResponse, then the
// connection's crewjam ServiceProvider) mutations of the forged-response corpus. Whatever
// comes in: no panic; a refusal is a saml_… client error, never a 500; what passes the
// screen is one well-formed XML document of at most 256 KiB without a DTD (checked by a
// reader of its own); and an accepted response names a person the IdP signed, never the
// victim a forgery names.
func FuzzSAMLResponse(f *testing.F) {
	w := fuzzWorld(f)
	for _, s := range w.seeds {
		if doc, err := base64.StdEncoding.DecodeString(s); err == nil {
			f.Add(doc)
		}
	}
	f.Add([]byte{})
	f.Add([]byte(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>`))
	// The input is the decoded document, posted as base64: mutations then change the XML,
	// which is where the parsers are, rather than mostly break the base64.
	f.Fuzz(func(t *testing.T, in []byte) {
		doc, err := decodeSAMLResponse(base64.StdEncoding.EncodeToString(in))
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || !strings.HasPrefix(e.Code, "saml_") || e.Kind != apperr.KindInvalid {
				t.Fatalf("refused with %v, not a saml_ client error", err)
			}
			return
		}
		checkScreened(t, doc)
		a, err := w.sp.ParseXMLResponse(doc, []string{w.requestID}, w.sp.AcsURL)
		if err != nil {
			return
		}
		if a.Subject == nil || a.Subject.NameID == nil || !w.signed[strings.TrimSpace(a.Subject.NameID.Value)] {
			t.Fatalf("accepted an assertion the IdP did not sign for anyone: %+v", a.Subject)
		}
	})
}

// FuzzSAMLScreen feeds screenXML documents, seeded with the corpus decoded: whatever it
// lets through must be what §27 allows, by a reader of its own.
func FuzzSAMLScreen(f *testing.F) {
	w := fuzzWorld(f)
	for _, s := range w.seeds {
		if doc, err := base64.StdEncoding.DecodeString(s); err == nil {
			f.Add(doc)
		}
	}
	f.Add([]byte(`<!DOCTYPE r [<!ENTITY x "y">]><r>&x;</r>`))
	f.Add([]byte(`<r/><r/>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if err := screenXML(doc, maxSAMLXML); err != nil {
			var r *xmlRefusal
			if !errors.As(err, &r) || samlReasons[r.reason] == "" {
				t.Fatalf("refusal %v names no reason of the ACS", err)
			}
			return
		}
		checkScreened(t, doc)
	})
}

// checkScreened is §27's rule for what may reach a SAML parser, read independently of
// screenXML: at most 256 KiB, well-formed (strict), no DTD or other directive, one root.
func checkScreened(t *testing.T, doc []byte) {
	t.Helper()
	if len(doc) > maxSAMLXML {
		t.Fatalf("%d bytes passed the screen", len(doc))
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("a document that is not well-formed passed the screen: %v", err)
		}
		switch tok.(type) {
		case xml.Directive:
			t.Fatalf("a directive passed the screen: %q", doc)
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots > 1 {
		t.Fatalf("%d root elements passed the screen", roots)
	}
}
