package samlcorpus

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // the SHA-1 cases sign with it on purpose
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"github.com/crewjam/saml/xmlenc"
	dsig "github.com/russellhaering/goxmldsig"
)

// Post is what a case's browser posts to the ACS.
type Post struct {
	Form        url.Values
	AssertionID string
	XML         []byte
}

// Options are the per-post parameters of Build.
type Options struct {
	Person, Victim Person
	// AssertionID, when set, is the assertion's ID (the not-burnt checks reuse one).
	AssertionID string
	Now         time.Time
}

// Build makes c's response to flow f. The IdP makes and signs it as crewjam's IdP does
// (the same assertion maker, enveloped signatures with exclusive C14N); the steps are
// taken one by one here, not through IdpAuthnRequest.MakeResponse, so that a case can
// edit between them.
func (p *IdP) Build(f *Flow, c Case, o Options) (*Post, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	vars := map[string]string{"{{acs}}": f.ACS, "{{audience}}": f.Audience, "{{requestId}}": f.RequestID,
		"{{issuer}}": p.IDP.MetadataURL.String(), "{{now}}": stamp(o.Now), "{{later}}": stamp(o.Now.Add(5 * time.Minute)),
		"{{victim}}": o.Victim.Email, "{{id}}": newID(), "{{id2}}": newID()}
	fill := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	post := &Post{Form: url.Values{}}
	if f.RelayState != "" {
		post.Form.Set("RelayState", f.RelayState)
	}
	if c.Form != nil && c.Form.XML != "" {
		post.XML = []byte(fill(c.Form.XML))
		return p.encode(post, c)
	}

	person := o.Person
	if c.Email != "" {
		person.Email = fill(c.Email)
	}
	req := *f.req // each response gets its own copy of the IdP's request state
	req.Now = o.Now
	if err := (saml.DefaultAssertionMaker{}).MakeAssertion(&req, person.session()); err != nil {
		return nil, fmt.Errorf("making the assertion: %w", err)
	}
	if o.AssertionID != "" {
		req.Assertion.ID = o.AssertionID
	}
	post.AssertionID = req.Assertion.ID
	assertion := req.Assertion.Element()
	if err := apply(assertion, c.Assertion, o.Now, fill); err != nil {
		return nil, fmt.Errorf("assertion: %w", err)
	}
	pad := func(n int) {
		if n > 0 {
			stmt := assertion.FindElement("./AttributeStatement")
			attr := stmt.CreateElement("saml:Attribute")
			attr.CreateAttr("Name", "urn:corpus:padding")
			v := attr.CreateElement("saml:AttributeValue")
			v.CreateAttr("xsi:type", "xs:string")
			v.CreateAttr("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance")
			v.SetText(strings.Repeat("p", n))
		}
	}
	if c.Pad > 0 {
		pad(c.Pad)
	}
	s := newSigner(p, c.Sign)
	if c.Sign.assertion() {
		var err error
		if assertion, err = s.sign(assertion); err != nil {
			return nil, fmt.Errorf("signing the assertion: %w", err)
		}
	}
	var assertionEl = assertion
	switch c.Encrypt {
	case "":
	case "sp", "foreign":
		cert, err := spEncryptionCert(f.SP)
		if err != nil {
			return nil, err
		}
		if c.Encrypt == "foreign" {
			cert = p.ForeignCert
		}
		doc := etree.NewDocument()
		doc.SetRoot(assertion.Copy())
		plain, err := doc.WriteToBytes()
		if err != nil {
			return nil, err
		}
		enc := xmlenc.OAEP()
		enc.BlockCipher = xmlenc.AES128CBC
		data, err := enc.Encrypt(cert, plain, nil)
		if err != nil {
			return nil, fmt.Errorf("encrypting: %w", err)
		}
		data.CreateAttr("Type", "http://www.w3.org/2001/04/xmlenc#Element")
		assertionEl = etree.NewElement("saml:EncryptedAssertion")
		assertionEl.AddChild(data)
	default:
		return nil, fmt.Errorf("unknown encrypt %q", c.Encrypt)
	}

	resp := &saml.Response{
		Destination: f.ACS, ID: newID(), InResponseTo: f.RequestID, IssueInstant: o.Now, Version: "2.0",
		Issuer: &saml.Issuer{Format: "urn:oasis:names:tc:SAML:2.0:nameid-format:entity", Value: p.IDP.MetadataURL.String()},
		Status: saml.Status{StatusCode: saml.StatusCode{Value: saml.StatusSuccess}},
	}
	root := resp.Element()
	root.AddChild(assertionEl)
	if err := apply(root, c.Response, o.Now, fill); err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	if c.Sign.response() {
		rs := s
		if c.Sign.ResponseKey != "" {
			rs = newSigner(p, Sign{Key: c.Sign.ResponseKey})
		}
		var err error
		if root, err = rs.sign(root); err != nil {
			return nil, fmt.Errorf("signing the response: %w", err)
		}
	}
	if c.Recipe != "" {
		var err error
		if root, err = recipes[c.Recipe](&recipeEnv{idp: p, signer: s, victim: o.Victim, now: o.Now, fill: fill}, root); err != nil {
			return nil, fmt.Errorf("recipe %s: %w", c.Recipe, err)
		}
	}
	if err := apply(root, c.After, o.Now, fill); err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	doc := etree.NewDocument()
	doc.SetRoot(root)
	b, err := doc.WriteToBytes()
	if err != nil {
		return nil, err
	}
	if c.Pad < 0 { // to exactly Limit bytes: grow the padding by what is missing, again
		// until it fits (the serialised size of a padded response is not quite linear)
		if len(b) > Limit {
			return nil, fmt.Errorf("the unpadded response is %d bytes, over the limit", len(b))
		}
		c2, o2 := c, o
		o2.AssertionID = post.AssertionID
		c2.Pad = Limit - len(b) - len(padOverhead)
		for range 4 {
			out, err := p.Build(f, c2, o2)
			if err != nil {
				return nil, err
			}
			if len(out.XML) == Limit {
				return out, nil
			}
			c2.Pad += Limit - len(out.XML)
		}
		return nil, fmt.Errorf("could not pad the response to exactly %d bytes", Limit)
	}
	post.XML = append(append([]byte(fill(c.Prefix)), b...), fill(c.Suffix)...)
	return p.encode(post, c)
}

// padOverhead is what the padding attribute adds beyond its value's bytes.
const padOverhead = `<saml:Attribute Name="urn:corpus:padding"><saml:AttributeValue xsi:type="xs:string" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"></saml:AttributeValue></saml:Attribute>`

func (p *IdP) encode(post *Post, c Case) (*Post, error) {
	enc := ""
	if c.Form != nil {
		enc = c.Form.Encoding
	}
	switch enc {
	case "", "base64":
		post.Form.Set("SAMLResponse", base64.StdEncoding.EncodeToString(post.XML))
	case "raw":
		post.Form.Set("SAMLResponse", c.Form.Value)
	case "absent":
	default:
		return nil, fmt.Errorf("unknown form encoding %q", enc)
	}
	return post, nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func spEncryptionCert(sp *saml.EntityDescriptor) (*x509.Certificate, error) {
	for _, d := range sp.SPSSODescriptors {
		for _, k := range d.KeyDescriptors {
			if k.Use == "encryption" || k.Use == "" {
				for _, c := range k.KeyInfo.X509Data.X509Certificates {
					der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c.Data), ""))
					if err != nil {
						return nil, err
					}
					return x509.ParseCertificate(der)
				}
			}
		}
	}
	return nil, fmt.Errorf("the SP's metadata offers no encryption key")
}

// apply runs ops on el.
func apply(el *etree.Element, ops []Op, now time.Time, fill func(string) string) error {
	for _, op := range ops {
		targets := []*etree.Element{el}
		if op.Path != "" && op.Path != "." {
			p, err := etree.CompilePath(op.Path)
			if err != nil {
				return fmt.Errorf("path %q: %w", op.Path, err)
			}
			targets = el.FindElementsPath(p)
		}
		if len(targets) == 0 {
			return fmt.Errorf("path %q selects nothing", op.Path)
		}
		for _, t := range targets {
			switch op.Op {
			case "set":
				if op.Attr != "" {
					t.CreateAttr(op.Attr, fill(op.Value))
				} else {
					t.SetText(fill(op.Value))
				}
			case "time":
				d, err := time.ParseDuration(op.By)
				if err != nil {
					return err
				}
				t.CreateAttr(op.Attr, stamp(now.Add(d)))
			case "remove":
				if op.Attr != "" {
					if t.RemoveAttr(op.Attr) == nil {
						return fmt.Errorf("%s has no attribute %s", op.Path, op.Attr)
					}
				} else {
					t.Parent().RemoveChild(t)
				}
			case "comment":
				text := t.Text()
				at := strings.Index(text, fill(op.Value))
				if at <= 0 {
					return fmt.Errorf("comment: %q is not inside %q", op.Value, text)
				}
				for _, ch := range append([]etree.Token(nil), t.Child...) {
					t.RemoveChild(ch)
				}
				t.CreateText(text[:at])
				t.CreateComment("")
				t.CreateText(text[at:])
			case "append":
				frag := etree.NewDocument()
				if err := frag.ReadFromString(fill(op.Value)); err != nil {
					return fmt.Errorf("append: %w", err)
				}
				t.AddChild(frag.Root().Copy())
			default:
				return fmt.Errorf("unknown op %q", op.Op)
			}
		}
	}
	return nil
}

// signer signs as crewjam's IdP does (exclusive C14N, enveloped), with the case's key,
// KeyInfo and algorithms.
type signer struct {
	key      *rsa.PrivateKey
	keyInfo  *x509.Certificate // nil: no KeyInfo
	method   crypto.Hash
	digest   crypto.Hash
	idpCert  *x509.Certificate
	idpKey   *rsa.PrivateKey
	foreignC *x509.Certificate
}

func newSigner(p *IdP, s Sign) *signer {
	out := &signer{key: p.Key, keyInfo: p.Cert, method: crypto.SHA256, digest: crypto.SHA256, idpCert: p.Cert, idpKey: p.Key, foreignC: p.ForeignCert}
	if s.Key == "foreign" {
		out.key, out.keyInfo = p.ForeignKey, p.ForeignCert
	}
	switch s.KeyInfo {
	case "idp":
		out.keyInfo = p.Cert
	case "foreign":
		out.keyInfo = p.ForeignCert
	case "none":
		out.keyInfo = nil
	}
	if s.Method == "sha1" {
		out.method = crypto.SHA1
	}
	if s.Digest == "sha1" {
		out.digest = crypto.SHA1
	}
	return out
}

var methodURI = map[crypto.Hash]string{crypto.SHA1: dsig.RSASHA1SignatureMethod, crypto.SHA256: dsig.RSASHA256SignatureMethod}

// sign returns a copy of el with an enveloped signature placed after its Issuer, where
// the schema wants it.
func (s *signer) sign(el *etree.Element) (*etree.Element, error) {
	cert := s.keyInfo
	if cert == nil {
		cert = s.idpCert
	}
	ctx := dsig.NewDefaultSigningContext(dsig.TLSCertKeyStore(tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: s.key}))
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	if err := ctx.SetSignatureMethod(methodURI[s.digest]); err != nil {
		return nil, err
	}
	signed, err := ctx.SignEnveloped(el)
	if err != nil {
		return nil, err
	}
	// SignEnveloped appends the signature to Child without making signed its parent:
	// take it out by hand, then insert it properly.
	sig := signed.Child[len(signed.Child)-1].(*etree.Element)
	signed.Child = signed.Child[:len(signed.Child)-1]
	if s.method != s.digest {
		// goxmldsig uses one hash for the digest and the signature; a case that mixes
		// them rewrites SignatureMethod and signs SignedInfo again, as a library that
		// offers the mix would.
		if err := s.resign(sig); err != nil {
			return nil, err
		}
	}
	if s.keyInfo == nil {
		if ki := sig.FindElement("./KeyInfo"); ki != nil {
			sig.RemoveChild(ki)
		}
	}
	at := 0
	if iss := signed.FindElement("./Issuer"); iss != nil {
		at = iss.Index() + 1
	}
	signed.InsertChildAt(at, sig)
	return signed, nil
}

func (s *signer) resign(sig *etree.Element) error {
	si := sig.FindElement("./SignedInfo")
	sm := si.FindElement("./SignatureMethod")
	sm.CreateAttr("Algorithm", methodURI[s.method])
	detached := si.Copy()
	detached.CreateAttr("xmlns:"+sig.Space, dsig.Namespace)
	canon, err := dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("").Canonicalize(detached)
	if err != nil {
		return err
	}
	var sum []byte
	if s.method == crypto.SHA1 {
		h := sha1.Sum(canon) //nolint:gosec // on purpose
		sum = h[:]
	} else {
		h := sha256.Sum256(canon)
		sum = h[:]
	}
	raw, err := rsa.SignPKCS1v15(rand.Reader, s.key, s.method, sum)
	if err != nil {
		return err
	}
	sig.FindElement("./SignatureValue").SetText(base64.StdEncoding.EncodeToString(raw))
	return nil
}

func moveAfterIssuer(parent, child *etree.Element) {
	parent.RemoveChild(child)
	at := 0
	if iss := parent.FindElement("./Issuer"); iss != nil {
		at = iss.Index() + 1
	}
	parent.InsertChildAt(at, child)
}
