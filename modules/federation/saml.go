package federation

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"strings"
	"time"

	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jonboulle/clockwork"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/secret"
)

// SPEC §27's SAML service provider is github.com/crewjam/saml's ServiceProvider: it builds
// and signs AuthnRequests, writes SP metadata, and checks Responses (signature, audience,
// recipient, destination, InResponseTo, time window, encrypted assertions), answering the
// assertion whose signature it checked. What it does not do is here, each with its why:
// the size limit, no DTDs, no SHA-1 or weaker, our clock and skew, single-use assertion
// ids across replicas (docs/decisions.md has the choice and its CVE history).

// maxSAMLXML bounds a decoded Response before anything parses it (SPEC §27): crewjam
// parses whatever it is given, and a document's cost grows with its size.
const maxSAMLXML = 256 << 10

// maxMetadataXML bounds an IdP's metadata document: larger than a Response, since some
// IdPs publish several keys and long organisation data, but still read whole into memory.
const maxMetadataXML = 1 << 20

// samlSkew is SPEC §27's bound on the IdP's clock against ours.
const samlSkew = 2 * time.Minute

func init() {
	// crewjam reads its allowed skew from a package variable (180 s by default); ours is
	// 2 minutes. Nothing else in the process uses crewjam's SP, so setting it once is safe.
	saml.MaxClockSkew = samlSkew
}

// samlClock is platform/clock seen as the clockwork.Clock crewjam and goxmldsig take, so
// that the time window and certificate validity are judged at our time (a test's fake).
type samlClock struct {
	clockwork.Clock
	c clock.Clock
}

func (s samlClock) Now() time.Time { return s.c.Now() }

func dsigClock(c clock.Clock) *dsig.Clock {
	return dsig.NewFakeClock(samlClock{Clock: clockwork.NewRealClock(), c: c})
}

// The algorithms a signature may use (SPEC §27: SHA-256 or better). crewjam's
// RejectSHA1Signatures refuses SHA-1's family; an allow-list also refuses MD5 and anything
// unknown before crewjam parses the document.
var (
	allowedSignatureMethods = map[string]bool{
		dsig.RSASHA256SignatureMethod: true, dsig.RSASHA384SignatureMethod: true, dsig.RSASHA512SignatureMethod: true,
		dsig.ECDSASHA256SignatureMethod: true, dsig.ECDSASHA384SignatureMethod: true, dsig.ECDSASHA512SignatureMethod: true,
	}
	allowedDigestMethods = map[string]bool{
		"http://www.w3.org/2001/04/xmlenc#sha256":       true,
		"http://www.w3.org/2001/04/xmldsig-more#sha384": true,
		"http://www.w3.org/2001/04/xmlenc#sha512":       true,
	}
)

// xmlRefusal is a document refused before parsing, with the reason its refusal names.
type xmlRefusal struct{ reason, why string }

func (e *xmlRefusal) Error() string { return e.why }

// screenXML reads doc's tokens once, before any SAML parsing, and refuses what SPEC §27
// forbids that crewjam would not: a DTD (a DOCTYPE or ENTITY declaration: entity expansion
// and external entities), and signatures by SHA-1 or weaker. etree (under crewjam) keeps a
// DOCTYPE as a token and goes on, so a document with one would otherwise be read.
func screenXML(doc []byte, limit int) error {
	if len(doc) > limit {
		return &xmlRefusal{"too_large", fmt.Sprintf("the document is %d bytes, more than %d", len(doc), limit)}
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	// The signature's own elements only: ds:DigestMethod also appears inside
	// xenc:EncryptionMethod (RSA-OAEP's digest), which is no signature.
	var stack []xml.Name
	rootDone := false
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			// RawToken checks neither that elements close nor that they close in order:
			// a truncated document must not pass for a whole one.
			if !rootDone {
				return &xmlRefusal{"malformed", "the document is not well-formed XML: it ends inside an element, or has none"}
			}
			break
		}
		if err != nil {
			return &xmlRefusal{"malformed", "the document is not well-formed XML: " + err.Error()}
		}
		switch t := tok.(type) {
		case xml.Directive:
			return &xmlRefusal{"dtd_refused", "the document has a DTD (DOCTYPE or ENTITY), which is refused"}
		case xml.CharData:
			if rootDone && len(bytes.TrimSpace(t)) > 0 {
				return &xmlRefusal{"malformed", "the document has text after its root element"}
			}
		case xml.StartElement:
			// One document, one root: the decoder reads on past the first root's end, and
			// etree (under crewjam) would keep only the first; what follows is refused
			// rather than left for two readers to disagree about.
			if rootDone {
				return &xmlRefusal{"malformed", "the document has more than one root element"}
			}
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1].Local
			}
			stack = append(stack, t.Name)
			alg := ""
			for _, a := range t.Attr {
				if a.Name.Local == "Algorithm" {
					alg = a.Value
				}
			}
			switch {
			case t.Name.Local == "SignatureMethod" && parent == "SignedInfo" && !allowedSignatureMethods[alg]:
				return &xmlRefusal{"weak_algorithm", fmt.Sprintf("signature method %q is refused: RSA or ECDSA with SHA-256 or better", alg)}
			case t.Name.Local == "DigestMethod" && parent == "Reference" && !allowedDigestMethods[alg]:
				return &xmlRefusal{"weak_algorithm", fmt.Sprintf("digest method %q is refused: SHA-256 or better", alg)}
			}
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1] != t.Name {
				return &xmlRefusal{"malformed", "the document is not well-formed XML: an end tag closes no element it opened"}
			}
			stack = stack[:len(stack)-1]
			rootDone = len(stack) == 0
		}
	}
	return nil
}

// samlMapping names the assertion attributes (by Name or FriendlyName) a connection reads.
type samlMapping struct {
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Groups    string `json:"groups"`
}

func (m samlMapping) asMap() map[string]string {
	return map[string]string{"email": m.Email, "firstName": m.FirstName, "lastName": m.LastName, "groups": m.Groups}
}

func mappingOf(m map[string]string) samlMapping {
	return samlMapping{Email: m["email"], FirstName: m["firstName"], LastName: m["lastName"], Groups: m["groups"]}
}

// samlConn is an org's SAML connection as the service reads it.
type samlConn struct {
	ID, TenantID, OrgID, Name string
	Enabled                   bool
	MetadataURL               string
	IdPMetadata               string
	IdPEntityID               string
	Mapping                   samlMapping
	AllowIdPInitiated         bool
	GroupRoles                map[string]string
	CreatedAt, UpdatedAt      time.Time
	ReadAt                    time.Time
	RefreshAt                 *time.Time
	keySealed, cert           string
}

func samlConnOf(r *ent.SAMLConnection) samlConn {
	return samlConn{ID: r.ID, TenantID: r.TenantID, OrgID: r.OrgID, Name: r.Name, Enabled: r.Enabled, MetadataURL: r.MetadataURL,
		IdPMetadata: r.IdpMetadata, IdPEntityID: r.IdpEntityID, Mapping: mappingOf(r.AttributeMapping), AllowIdPInitiated: r.AllowIdpInitiated,
		GroupRoles: r.GroupRoles, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ReadAt: r.MetadataReadAt, RefreshAt: r.MetadataRefreshAt,
		keySealed: r.SpKeySealed, cert: r.SpCertificate}
}

// version changes whenever anything its service provider is built from does.
func (c samlConn) version() string {
	return c.ID + "\x00" + c.UpdatedAt.UTC().Format(time.RFC3339Nano) + "\x00" + c.ReadAt.UTC().Format(time.RFC3339Nano)
}

// The connection's SP endpoints (SPEC §27). The metadata URL is also the SP's entity id.
func samlMetadataURL(self, id string) string {
	return self + "/saml/" + url.PathEscape(id) + "/metadata"
}
func samlACSURL(self, id string) string   { return self + "/saml/" + url.PathEscape(id) + "/acs" }
func samlLoginURL(self, id string) string { return self + "/saml/" + url.PathEscape(id) + "/login" }

// newSPKey makes a connection's key pair: RSA 2048 (XML encryption needs RSA) and a
// self-signed certificate, which is how SAML metadata carries a public key.
func newSPKey(id string, now time.Time) (*rsa.PrivateKey, []byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "authcore SAML SP " + id},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(20, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	return key, der, err
}

// idpMetadata is an IdP's metadata, parsed and checked.
type idpMetadata struct {
	ed        *saml.EntityDescriptor
	refreshAt time.Time // when to read a URL's again
}

// metadataDay is the longest a URL's metadata is kept before it is read again.
const metadataDay = 24 * time.Hour

// parseIdPMetadata reads an IdP's metadata (SPEC §27): no DTD, an IdP SSO endpoint with the
// HTTP-Redirect binding (at an address the outbound policy allows), and at least one
// signing certificate. Every signing certificate stays in the document crewjam trusts.
func parseIdPMetadata(doc []byte, allowHTTP bool, now time.Time) (idpMetadata, error) {
	if err := screenXML(doc, maxMetadataXML); err != nil {
		return idpMetadata{}, err
	}
	ed, err := samlsp.ParseMetadata(doc)
	if err != nil {
		return idpMetadata{}, errors.New("it is not SAML metadata of an identity provider")
	}
	if ed.EntityID == "" || len(ed.EntityID) > 1024 {
		return idpMetadata{}, errors.New("it names no entityID")
	}
	if len(ed.IDPSSODescriptors) == 0 {
		return idpMetadata{}, errors.New("it has no IDPSSODescriptor")
	}
	redirect, certs := false, 0
	for _, d := range ed.IDPSSODescriptors {
		for _, s := range d.SingleSignOnServices {
			if s.Binding != saml.HTTPRedirectBinding {
				continue
			}
			u, err := url.Parse(s.Location)
			if err == nil && u.Host != "" && (u.Scheme == "https" || (u.Scheme == "http" && allowHTTP)) {
				redirect = true
			}
		}
		for _, k := range d.KeyDescriptors {
			if k.Use != "" && k.Use != "signing" {
				continue
			}
			for _, c := range k.KeyInfo.X509Data.X509Certificates {
				der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c.Data), ""))
				if err != nil {
					return idpMetadata{}, errors.New("a signing certificate is not base64")
				}
				if _, err := x509.ParseCertificate(der); err != nil {
					return idpMetadata{}, errors.New("a signing certificate does not parse")
				}
				certs++
			}
		}
	}
	if !redirect {
		return idpMetadata{}, errors.New("it has no SingleSignOnService with the HTTP-Redirect binding at an https URL")
	}
	if certs == 0 {
		return idpMetadata{}, errors.New("it has no signing certificate")
	}
	refresh := now.Add(metadataDay)
	if ed.CacheDuration > 0 && now.Add(ed.CacheDuration).Before(refresh) {
		refresh = now.Add(ed.CacheDuration)
	}
	if !ed.ValidUntil.IsZero() && ed.ValidUntil.Before(refresh) {
		refresh = ed.ValidUntil
	}
	// An IdP saying "read me again at once" is read again in 5 minutes, not in a loop.
	if floor := now.Add(5 * time.Minute); refresh.Before(floor) {
		refresh = floor
	}
	return idpMetadata{ed: ed, refreshAt: refresh}, nil
}

// samlSPs builds and caches each connection's crewjam service provider: opening its key
// and parsing its metadata is most of a sign-in's work otherwise.
type samlSPs struct {
	keys  *secret.Keyring
	clock clock.Clock
	self  string
	cache *lru.Cache[string, *saml.ServiceProvider]
}

func newSAMLSPs(keys *secret.Keyring, clk clock.Clock, self string) *samlSPs {
	cache, _ := lru.New[string, *saml.ServiceProvider](1024) // cannot fail: the size is positive
	return &samlSPs{keys: keys, clock: clk, self: self, cache: cache}
}

// of is c's service provider. It is shared by concurrent requests: crewjam's
// ServiceProvider is read, never written, by building requests and parsing responses.
func (s *samlSPs) of(c samlConn) (*saml.ServiceProvider, error) {
	if sp, ok := s.cache.Get(c.version()); ok {
		return sp, nil
	}
	raw, err := s.keys.Open(c.keySealed, []byte(c.ID))
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(raw)
	if err != nil {
		return nil, err
	}
	key, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("saml connection key is not RSA")
	}
	der, err := base64.StdEncoding.DecodeString(c.cert)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ed, err := samlsp.ParseMetadata([]byte(c.IdPMetadata))
	if err != nil {
		return nil, err
	}
	md, _ := url.Parse(samlMetadataURL(s.self, c.ID))
	acs, _ := url.Parse(samlACSURL(s.self, c.ID))
	sp := &saml.ServiceProvider{
		EntityID: md.String(), Key: key, Certificate: cert, EncryptionKey: key, EncryptionCertificate: cert,
		MetadataURL: *md, AcsURL: *acs, IDPMetadata: ed,
		SignatureMethod:                  dsig.RSASHA256SignatureMethod,
		AllowIDPInitiated:                c.AllowIdPInitiated,
		Clock:                            dsigClock(s.clock),
		RejectSHA1Signatures:             true,
		AssertionConsumerServiceBindings: []string{saml.HTTPPostBinding},
		MetadataValidDuration:            metadataDay * 7,
		// crewjam asks for a transient NameID unless told otherwise; an IdP that honours
		// it (Entra, AD FS) gives a new one at every sign-in, and the identity is
		// (connection, NameID). Unspecified leaves the format to the IdP's configuration.
		AuthnNameIDFormat: saml.UnspecifiedNameIDFormat,
	}
	s.cache.Add(c.version(), sp)
	return sp, nil
}
