// Package samlcorpus is the corpus of forged and wrong SAML responses that SPEC §27's
// service provider must refuse (issue 44): named cases kept as data (corpus/*.json), each
// applied at test time to a fresh response that crewjam/saml's identity provider makes
// for a real AuthnRequest, since responses carry time windows and InResponseTo and so
// cannot be kept as static files. It holds no test of its own beyond a self-check: the
// federation tests post every case to the real ACS of the real app.
//
// Only test code imports it: it signs with throwaway keys and must never be wired into
// the app.
package samlcorpus

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

// IdP is crewjam/saml's identity provider with a key of its own, plus a foreign key that
// no connection trusts (for the cases signed by someone else).
type IdP struct {
	IDP         *saml.IdentityProvider
	Key         *rsa.PrivateKey
	Cert        *x509.Certificate
	ForeignKey  *rsa.PrivateKey
	ForeignCert *x509.Certificate
}

// NewIdP makes an identity provider whose entity ID is entityID and whose SSO URL is
// ssoURL. The SSO URL is only where the SP's login redirects the browser: the tests read
// the AuthnRequest from that redirect and hand it to the IdP themselves.
func NewIdP(entityID, ssoURL string) (*IdP, error) {
	key, cert, err := selfSigned("corpus idp")
	if err != nil {
		return nil, err
	}
	fkey, fcert, err := selfSigned("corpus foreign idp")
	if err != nil {
		return nil, err
	}
	meta, err := url.Parse(entityID)
	if err != nil {
		return nil, err
	}
	sso, err := url.Parse(ssoURL)
	if err != nil {
		return nil, err
	}
	return &IdP{
		IDP: &saml.IdentityProvider{
			Key: key, Certificate: cert, MetadataURL: *meta, SSOURL: *sso,
			// The SP's AuthnRequests must be signed (§27): the IdP refuses unsigned ones.
			WantAuthnRequestsSigned: true,
		},
		Key: key, Cert: cert, ForeignKey: fkey, ForeignCert: fcert,
	}, nil
}

func selfSigned(cn string) (*rsa.PrivateKey, *x509.Certificate, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

// Metadata is the IdP's metadata document, as a connection's metadataXml.
func (p *IdP) Metadata() ([]byte, error) {
	return xml.MarshalIndent(p.IDP.Metadata(), "", "  ")
}

// spProvider answers the IdP's question "who is this SP" with the SP's own metadata.
type spProvider struct{ sp *saml.EntityDescriptor }

func (s spProvider) GetServiceProvider(_ *http.Request, id string) (*saml.EntityDescriptor, error) {
	if s.sp == nil || s.sp.EntityID != id {
		return nil, os.ErrNotExist
	}
	return s.sp, nil
}

// Flow is one AuthnRequest the IdP received and accepted: what a response answers.
type Flow struct {
	req        *saml.IdpAuthnRequest
	SP         *saml.EntityDescriptor
	RequestID  string // "" for an IdP-initiated response
	RelayState string
	ACS        string
	Audience   string
}

// Receive is the IdP's end of an SP-initiated sign-in: redirect is the Location the SP's
// login answered (the HTTP-Redirect binding), spMetadata the SP's metadata document. The
// IdP checks the request as crewjam/saml does, its signature included, at time now (the
// SP's clock in tests, which may be a fake one that stands still).
func (p *IdP) Receive(redirect string, spMetadata []byte, now time.Time) (*Flow, error) {
	sp, err := ParseSPMetadata(spMetadata)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequest(http.MethodGet, redirect, nil)
	if err != nil {
		return nil, err
	}
	r.RemoteAddr = "127.0.0.1:40000"
	idp := *p.IDP
	idp.ServiceProviderProvider = spProvider{sp}
	idp.Clock = dsig.NewFakeClockAt(now)
	req, err := saml.NewIdpAuthnRequest(&idp, r)
	if err != nil {
		return nil, fmt.Errorf("the IdP could not read the AuthnRequest: %w", err)
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("the IdP refused the AuthnRequest: %w", err)
	}
	return &Flow{req: req, SP: sp, RequestID: req.Request.ID, RelayState: req.RelayState,
		ACS: req.ACSEndpoint.Location, Audience: sp.EntityID}, nil
}

// Unsolicited is an IdP-initiated flow to the SP's default ACS: no request, no RelayState.
func (p *IdP) Unsolicited(spMetadata []byte, now time.Time) (*Flow, error) {
	sp, err := ParseSPMetadata(spMetadata)
	if err != nil {
		return nil, err
	}
	r, _ := http.NewRequest(http.MethodGet, p.IDP.SSOURL.String(), nil)
	r.RemoteAddr = "127.0.0.1:40000"
	idp := *p.IDP
	idp.ServiceProviderProvider = spProvider{sp}
	idp.Clock = dsig.NewFakeClockAt(now)
	req, err := idp.NewIdpInitiatedRequest(r, sp.EntityID, "")
	if err != nil {
		return nil, fmt.Errorf("the IdP could not start an unsolicited response: %w", err)
	}
	return &Flow{req: req, SP: sp, ACS: req.ACSEndpoint.Location, Audience: sp.EntityID}, nil
}

// ParseSPMetadata reads an SP's metadata document.
func ParseSPMetadata(doc []byte) (*saml.EntityDescriptor, error) {
	var ed saml.EntityDescriptor
	if err := xml.Unmarshal(doc, &ed); err != nil {
		return nil, fmt.Errorf("SP metadata: %w", err)
	}
	if len(ed.SPSSODescriptors) == 0 {
		return nil, errors.New("SP metadata has no SPSSODescriptor")
	}
	return &ed, nil
}

// Person is whom a response names.
type Person struct {
	Email, First, Last string
	Groups             []string
}

func (p Person) session() *saml.Session {
	return &saml.Session{
		ID: "s-" + newID(), CreateTime: time.Now(), ExpireTime: time.Now().Add(time.Hour), Index: newID(),
		NameID: p.Email, NameIDFormat: string(saml.EmailAddressNameIDFormat),
		UserName: p.Email, UserEmail: p.Email, UserGivenName: p.First, UserSurname: p.Last,
		UserCommonName: p.First + " " + p.Last, Groups: p.Groups,
	}
}

// Attribute names crewjam's IdP writes (its DefaultAssertionMaker), for a connection's
// attributeMapping.
const (
	AttrEmail  = "urn:oid:0.9.2342.19200300.100.1.3"
	AttrFirst  = "urn:oid:2.5.4.42"
	AttrLast   = "urn:oid:2.5.4.4"
	AttrGroups = "urn:oid:1.3.6.1.4.1.5923.1.1.1.1"
)

// Plain is the IdP's own response to f for person, made entirely by crewjam/saml (its
// assertion maker, signer and, when the SP's metadata offers a key, encrypter): the
// control that shows the SP accepts what a stock IdP sends.
func (p *IdP) Plain(f *Flow, person Person) (url.Values, error) {
	req := f.req
	if err := (saml.DefaultAssertionMaker{}).MakeAssertion(req, person.session()); err != nil {
		return nil, err
	}
	form, err := req.PostBinding()
	if err != nil {
		return nil, err
	}
	v := url.Values{"SAMLResponse": {form.SAMLResponse}}
	if form.RelayState != "" {
		v.Set("RelayState", form.RelayState)
	}
	return v, nil
}

func newID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return "id-" + hex.EncodeToString(b)
}
