package federation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crewjam/saml"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/federationflow"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

// samlSignIn is SPEC §27's sign-in through an org's SAML connection: the AuthnRequest, the
// ACS's checks, and who the asserted person is.
type samlSignIn struct {
	svc    *service
	admin  samlAdmin
	sps    *samlSPs
	replay assertion.Replay   // nil: no oauth module, so no replay store: every Response is refused
	roster identity.OrgRoster // nil: no org module
}

// errSAML is a refused Response. Each reason is its own code (saml_<reason>), so a refusal
// says which rule it broke, to the person, the logs (with crewjam's cause, at INFO: anyone
// can post to the ACS) and the tests.
func errSAML(reason string, cause error) *apperr.Error {
	e := apperr.BadRequest("saml_"+reason, samlReasons[reason])
	if e.Message == "" {
		e.Message = "the identity provider's answer was refused"
	}
	if cause != nil {
		return e.Because(cause)
	}
	return e
}

var samlReasons = map[string]string{
	"no_response":           "no SAMLResponse was posted",
	"too_large":             "the SAML response is larger than 256 KiB",
	"malformed":             "the SAML response is not well-formed",
	"dtd_refused":           "the SAML response has a DTD, which is refused",
	"weak_algorithm":        "the SAML response is signed with SHA-1 or weaker, which is refused",
	"invalid_relay_state":   "this sign-in is unknown, used or expired: start again",
	"flow_not_this_browser": "this sign-in was started in another browser: start again",
	"unsolicited":           "this connection accepts only sign-ins started here (IdP-initiated sign-in is off)",
	"invalid_signature":     "the SAML response is not signed by the identity provider's certificate",
	"untrusted_certificate": "the SAML response is signed by a certificate the identity provider's metadata does not name",
	"expired":               "the SAML assertion has expired",
	"not_yet_valid":         "the SAML assertion is not yet valid",
	"issuer_mismatch":       "the SAML response is from another identity provider",
	"destination_mismatch":  "the SAML response is for another recipient",
	"audience_mismatch":     "the SAML assertion is for another service provider",
	"in_response_to":        "the SAML response answers no request of this browser",
	"unsupported":           "the SAML response uses something this service provider does not accept",
	"missing_element":       "the SAML response lacks a required element",
	"idp_status":            "the identity provider did not sign the person in",
	"assertion_replayed":    "this SAML assertion was used already",
	"no_name_id":            "the SAML assertion names no subject",
	"invalid":               "the SAML response was refused",
}

// beforeSignatureHeld are the refusals a forged ciphertext can reach.
var beforeSignatureHeld = map[string]bool{"invalid_signature": true, "untrusted_certificate": true, "unsupported": true,
	"missing_element": true, "malformed": true, "invalid": true}

// classifySAML names the rule crewjam's refusal broke; its sentinel errors are matched
// most specific first.
func classifySAML(err error) string {
	var status saml.ErrBadStatus
	switch {
	case errors.As(err, &status):
		return "idp_status"
	case errors.Is(err, saml.ErrUntrustedCertificate):
		return "untrusted_certificate"
	case errors.Is(err, saml.ErrUnsupported):
		return "unsupported"
	case errors.Is(err, saml.ErrInvalidSignature), errors.Is(err, saml.ErrCertificateNotValidNow):
		return "invalid_signature"
	case errors.Is(err, saml.ErrAudienceMismatch):
		return "audience_mismatch"
	case errors.Is(err, saml.ErrDestinationMismatch):
		return "destination_mismatch"
	case errors.Is(err, saml.ErrRequestIDMismatch):
		return "in_response_to"
	case errors.Is(err, saml.ErrIssuerMismatch):
		return "issuer_mismatch"
	case errors.Is(err, saml.ErrExpired):
		return "expired"
	case errors.Is(err, saml.ErrNotYetValid):
		return "not_yet_valid"
	case errors.Is(err, saml.ErrMissingElement):
		return "missing_element"
	case errors.Is(err, saml.ErrMalformedMessage):
		return "malformed"
	}
	return "invalid"
}

// login starts a sign-in (or an admin's test) through c: a flow row holding the
// RelayState's digest, the browser's, and the AuthnRequest's id (what InResponseTo must
// be); then the IdP's URL with the signed request (HTTP-Redirect binding).
func (s samlSignIn) login(ctx context.Context, c samlConn, redirect, browser string, purpose federationflow.Purpose) (started, error) {
	if !c.Enabled {
		return started{}, errProviderDisabled
	}
	sp, err := s.sps.of(c)
	if err != nil {
		return started{}, err
	}
	req, err := sp.MakeAuthenticationRequest(sp.GetSSOBindingLocation(saml.HTTPRedirectBinding), saml.HTTPRedirectBinding, saml.HTTPPostBinding)
	if err != nil {
		return started{}, err
	}
	if browser == "" {
		browser = random(32)
	}
	relay := random(32)
	u, err := req.Redirect(relay, sp)
	if err != nil {
		return started{}, err
	}
	id := schema.NewID(schema.FederationFlowIDPrefix)
	if err := s.svc.ent.FederationFlow.Create().SetID(id).SetTenantID(c.TenantID).SetProviderID(c.ID).
		SetStateDigest(secret.DigestOf(relay).Bytes()).SetBrowserDigest(secret.DigestOf(browser).Bytes()).SetNonce(req.ID).
		SetVerifierSealed("").SetPurpose(purpose).SetRedirect(redirect).SetExpiresAt(s.svc.clock.Now().Add(flowTTL)).Exec(ctx); err != nil {
		return started{}, err
	}
	return started{URL: u.String(), Browser: browser, ID: id}, nil
}

// acsPost is what the browser posted to the ACS, and who it is.
type acsPost struct {
	SAMLResponse, RelayState string
	Browser                  string
	UserAgent, IP            string
}

// samlAttrs is what a verified assertion says, mapped by the connection.
type samlAttrs struct {
	NameID, Email, FirstName, LastName string
	Groups                             []string
}

func (a samlAttrs) name() string { return strings.TrimSpace(a.FirstName + " " + a.LastName) }

// namePtr is the name for a new account, nil when the IdP gave none.
func (a samlAttrs) namePtr() *string {
	if n := a.name(); n != "" {
		return &n
	}
	return nil
}

// decode is the posted Response as XML, screened before any parser sees it.
func decodeSAMLResponse(raw string) ([]byte, error) {
	if raw == "" {
		return nil, errSAML("no_response", nil)
	}
	// Base64 of 256 KiB, with room for line breaks.
	if len(raw) > base64.StdEncoding.EncodedLen(maxSAMLXML)+maxSAMLXML/32 {
		return nil, errSAML("too_large", nil)
	}
	doc, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(raw), ""))
	if err != nil {
		return nil, errSAML("malformed", errors.New("SAMLResponse is not base64"))
	}
	if err := screenXML(doc, maxSAMLXML); err != nil {
		var r *xmlRefusal
		if errors.As(err, &r) {
			return nil, errSAML(r.reason, err)
		}
		return nil, errSAML("malformed", err)
	}
	return doc, nil
}

// flowOf is the flow the RelayState names, spent (once: a replayed post finds it used);
// nil when the RelayState names none (an IdP-initiated sign-in's is the IdP's own).
func (s samlSignIn) flowOf(ctx context.Context, c samlConn, in acsPost) (*ent.FederationFlow, error) {
	if in.RelayState == "" || len(in.RelayState) > 200 {
		return nil, nil
	}
	f, err := s.svc.ent.FederationFlow.Query().Where(federationflow.StateDigest(secret.DigestOf(in.RelayState).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now := s.svc.clock.Now()
	if f.ProviderID != c.ID || f.UsedAt != nil || !now.Before(f.ExpiresAt) {
		return f, errSAML("invalid_relay_state", nil)
	}
	// A test is started by an admin's API call and finished in whatever browser signs in
	// at the IdP: bound to no browser, and it signs no one in.
	if f.Purpose != federationflow.PurposeTest && !secret.Equal(f.BrowserDigest, secret.DigestOf(in.Browser).Bytes()) {
		return f, errSAML("flow_not_this_browser", nil)
	}
	n, err := s.svc.ent.FederationFlow.Update().Where(federationflow.ID(f.ID), federationflow.UsedAtIsNil()).SetUsedAt(now).Save(ctx)
	if err != nil {
		return f, err
	}
	if n != 1 {
		return f, errSAML("invalid_relay_state", nil)
	}
	return f, nil
}

// verify is the assertion of a posted Response, every rule of SPEC §27 checked: crewjam
// the signature (over what it returns: the element read is the one verified), issuer,
// audience, recipient, destination, InResponseTo (the flow's request, or none when
// unsolicited), time window and decryption; then its id spent across replicas.
func (s samlSignIn) verify(ctx context.Context, c samlConn, doc []byte, f *ent.FederationFlow) (*saml.Assertion, error) {
	if f == nil && !c.AllowIdPInitiated {
		return nil, errSAML("unsolicited", nil)
	}
	shared, err := s.sps.of(c)
	if err != nil {
		return nil, err
	}
	// A Response to this browser's request must answer it: crewjam lets an SP that takes
	// unsolicited Responses take one without InResponseTo anywhere, so only a post
	// without a flow is read as unsolicited.
	sp := *shared
	sp.AllowIDPInitiated = f == nil
	var ids []string
	if f != nil {
		ids = []string{f.Nonce}
	}
	a, err := sp.ParseXMLResponse(doc, ids, sp.AcsURL)
	if err != nil {
		// crewjam says "Authentication failed" to the world and keeps why for the logs.
		var ire *saml.InvalidResponseError
		if errors.As(err, &ire) && ire.PrivateErr != nil {
			err = ire.PrivateErr
		}
		code := classifySAML(err)
		// Of a response carrying an encrypted assertion, whatever broke before the
		// assertion's signature held is one code: a distinct answer to a failed decryption,
		// or to plaintext that does or does not parse, would be the oracle of the XML
		// Encryption CBC attacks (Jager and Somorovsky, 2011) when the IdP signs only the
		// encrypted assertion. What is judged after the signature (time, audience) cannot
		// be reached with a forged ciphertext, so it keeps its name. The log keeps the cause.
		if beforeSignatureHeld[code] && bytes.Contains(doc, []byte("EncryptedAssertion")) {
			code = "invalid"
		}
		return nil, errSAML(code, err)
	}
	if a.Subject == nil || a.Subject.NameID == nil || strings.TrimSpace(a.Subject.NameID.Value) == "" || len(a.Subject.NameID.Value) > 512 {
		return nil, errSAML("no_name_id", nil)
	}
	if s.replay == nil {
		return nil, errSAML("assertion_replayed", errors.New("no replay store in this process"))
	}
	fresh, err := s.replay.Spend(ctx, "saml:"+c.ID, assertionKey(a.ID), assertionUntil(a, s.svc.clock.Now()))
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, errSAML("assertion_replayed", fmt.Errorf("assertion %q of connection %s", assertionKey(a.ID), c.ID))
	}
	return a, nil
}

// assertionKey is an assertion's id as the replay store keeps it: a long one by its
// digest, since the store's key is at most 256 characters.
func assertionKey(id string) string {
	if len(id) <= 128 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// assertionUntil is until when an assertion's id must stay spent: past the latest moment
// any of its windows (with the skew) could still accept it.
func assertionUntil(a *saml.Assertion, now time.Time) time.Time {
	until := a.IssueInstant.Add(saml.MaxIssueDelay)
	if a.Conditions != nil && a.Conditions.NotOnOrAfter.After(until) {
		until = a.Conditions.NotOnOrAfter
	}
	if a.Subject != nil {
		for _, sc := range a.Subject.SubjectConfirmations {
			if d := sc.SubjectConfirmationData; d != nil && d.NotOnOrAfter.After(until) {
				until = d.NotOnOrAfter
			}
		}
	}
	until = until.Add(samlSkew)
	if floor := now.Add(samlSkew); until.Before(floor) {
		until = floor
	}
	return until
}

// attrsOf reads the verified assertion by the connection's mapping: an attribute matches
// by Name or FriendlyName. Nothing is read from the raw document.
func attrsOf(a *saml.Assertion, m samlMapping) samlAttrs {
	out := samlAttrs{NameID: strings.TrimSpace(a.Subject.NameID.Value)}
	values := func(name string) []string {
		if name == "" {
			return nil
		}
		var vs []string
		for _, st := range a.AttributeStatements {
			for _, at := range st.Attributes {
				if at.Name == name || at.FriendlyName == name {
					for _, v := range at.Values {
						if s := strings.TrimSpace(v.Value); s != "" {
							vs = append(vs, s)
						}
					}
				}
			}
		}
		return vs
	}
	first := func(name string) string {
		if vs := values(name); len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	out.Email, out.FirstName, out.LastName = first(m.Email), first(m.FirstName), first(m.LastName)
	out.Groups = values(m.Groups)
	if out.Email == "" && a.Subject.NameID.Format == string(saml.EmailAddressNameIDFormat) {
		out.Email = out.NameID
	}
	return out
}

// roleOf is the org role the person's groups give by the connection's groupRoles: admin
// when any group gives it, else the first group's (by name) that maps. With groupRoles set
// the IdP is where roles are kept: groups that map to none give the default role, so a
// person taken out of the IdP's admin group is no org admin at their next sign-in. Without
// groupRoles, "" (a new member gets the default role, a member keeps theirs).
func roleOf(groups []string, groupRoles map[string]string) string {
	var names []string
	for _, g := range groups {
		if r, ok := groupRoles[g]; ok {
			if r == "admin" {
				return r
			}
			names = append(names, g)
		}
	}
	if len(names) == 0 {
		if len(groupRoles) > 0 {
			return defaultOrgRole
		}
		return ""
	}
	slices.Sort(names)
	return groupRoles[names[0]]
}

// defaultOrgRole is the role OrgRoster.Enroll gives a new member when none is named.
const defaultOrgRole = "member"

// testResult is what a test sign-in shows the admin: the mapped attributes.
func (s samlSignIn) testResult(ctx context.Context, c samlConn, at samlAttrs) (map[string]any, error) {
	trusted := false
	if at.Email != "" {
		if addr, ok := identity.NormalizeEmail(at.Email); ok {
			var err error
			if trusted, err = s.svc.org.vouches(ctx, c.TenantID, c.OrgID, addr); err != nil {
				return nil, err
			}
		}
	}
	groups := at.Groups
	if groups == nil {
		groups = []string{}
	}
	return map[string]any{"subject": at.NameID, "email": at.Email, "emailTrusted": trusted, "firstName": at.FirstName,
		"lastName": at.LastName, "name": at.name(), "groups": groups, "role": roleOf(at.Groups, c.GroupRoles)}, nil
}

// resolve decides who the asserted person is (SPEC §27): the identity (connection,
// NameID) once linked; a new one joins the account of its address only when the address
// is of a domain the connection's org verified (the same rule as an org's OIDC
// connection, TestOrgConnectionVouchesOnlyForItsDomains), the account proved it too and
// the tenant links by address; else a new person is made, again only for such an
// address. The person is then enrolled in the org (its default role, or their groups'),
// all in one transaction with its audit records.
func (s samlSignIn) resolve(ctx context.Context, c samlConn, at samlAttrs, origin audit.Origin) (identity.Account, error) {
	svc := s.svc
	existing, err := svc.ent.Identity.Query().Where(entidentity.ProviderID(c.ID), entidentity.Subject(at.NameID)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return identity.Account{}, err
	}
	email, emailOK := identity.NormalizeEmail(at.Email)
	vouched := false
	if emailOK {
		if vouched, err = svc.org.vouches(ctx, c.TenantID, c.OrgID, email); err != nil {
			return identity.Account{}, err
		}
	}
	var acc identity.Account
	var joinByEmail, createUser bool
	if existing != nil {
		if acc, err = svc.users.Account(ctx, existing.UserID); err != nil {
			return identity.Account{}, err
		}
	} else {
		if !emailOK {
			return identity.Account{}, errNoEmail
		}
		if !vouched {
			return identity.Account{}, errEmailNotProven
		}
		found, ok, err := svc.users.AccountByEmail(ctx, c.TenantID, email)
		if err != nil {
			return identity.Account{}, err
		}
		m, err := svc.store.methods(ctx, c.TenantID)
		if err != nil {
			return identity.Account{}, err
		}
		switch {
		case ok && found.EmailVerified && m.AutoLink:
			acc, joinByEmail = found, true
		case ok:
			return identity.Account{}, errAccountExists
		case svc.cfg.Signup == "closed":
			return identity.Account{}, errSignupClosed
		default:
			createUser = true
		}
	}
	addr := acc.Email
	if createUser {
		addr = email
	}
	if err := svc.SignInAllowed(ctx, c.TenantID, addr, identity.Via{Method: "saml", ProviderID: c.ID}); err != nil {
		return identity.Account{}, err
	}
	if !createUser {
		if err := svc.users.Admit(ctx, acc.ID); err != nil {
			return identity.Account{}, err
		}
	}
	via, actor := "saml:"+c.ID, "saml:"+c.ID
	now := svc.clock.Now()
	err = database.WithTx(ctx, svc.ent, func(tx *ent.Tx) error {
		if createUser {
			if acc, err = svc.users.CreateProven(ctx, tx, c.TenantID, email, at.namePtr()); err != nil {
				if errors.Is(err, identity.ErrEmailTaken) {
					return errAccountExists
				}
				return err
			}
			if _, err := svc.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: c.TenantID, Action: audit.ActionSignUp, Origin: origin,
				Metadata: map[string]any{"userId": acc.ID, "method": audit.MethodProvider, "via": via}}); err != nil {
				return err
			}
		}
		if existing == nil {
			id := schema.NewID(schema.IdentityIDPrefix)
			err := tx.Identity.Create().SetID(id).SetTenantID(c.TenantID).SetUserID(acc.ID).SetProviderID(c.ID).SetSubject(at.NameID).
				SetEmail(email).SetEmailVerified(vouched).SetLastUsedAt(now).Exec(ctx)
			if ent.IsConstraintError(err) {
				return errIdentityTaken // another post linked this NameID a moment ago
			}
			if err != nil {
				return err
			}
			how := "signup"
			if joinByEmail {
				how = "email"
			}
			if _, err := svc.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: c.TenantID, Action: actionLink, Origin: origin,
				Metadata: map[string]any{"userId": acc.ID, "identityId": id, "providerId": c.ID, "how": how}}); err != nil {
				return err
			}
		} else if err := tx.Identity.UpdateOneID(existing.ID).SetEmail(email).SetEmailVerified(vouched).SetLastUsedAt(now).Exec(ctx); err != nil {
			return err
		}
		if _, err := svc.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: c.TenantID, Action: audit.ActionSignIn, Origin: origin,
			Metadata: map[string]any{"userId": acc.ID, "method": audit.MethodProvider, "via": via}}); err != nil {
			return err
		}
		if s.roster == nil {
			return nil
		}
		role := roleOf(at.Groups, c.GroupRoles)
		if err := s.roster.Enroll(ctx, tx, c.TenantID, c.OrgID, acc.ID, role, actor); errors.Is(err, identity.ErrNoOrgRole) {
			// The project dropped a role groupRoles names (only roles members hold are
			// kept): the org admin's configuration to fix, not a failure of ours.
			return errGroupRoleUnknown.With("role", role)
		} else if err != nil {
			return err
		}
		return nil
	})
	return acc, err
}

var errGroupRoleUnknown = apperr.Conflict("saml_group_role_unknown",
	"the connection's groupRoles give this person a role the project no longer defines: an org admin must fix the connection's groupRoles")

// acs finishes a sign-in at the ACS: the Response verified, then a test's result, or the
// person signed in (a session in the connection's org, or the second step) and sent on.
func (s samlSignIn) acs(ctx context.Context, connID string, in acsPost, origin audit.Origin) (outcome, *ent.FederationFlow, samlConn, error) {
	c, err := s.admin.get(ctx, "", connID)
	if err != nil {
		return outcome{}, nil, c, err
	}
	if !c.Enabled {
		return outcome{}, nil, c, errProviderDisabled
	}
	doc, err := decodeSAMLResponse(in.SAMLResponse)
	if err != nil {
		return outcome{}, nil, c, err
	}
	f, err := s.flowOf(ctx, c, in)
	if err != nil {
		return outcome{}, f, c, err
	}
	a, err := s.verify(ctx, c, doc, f)
	if err != nil {
		return outcome{}, f, c, err
	}
	at := attrsOf(a, c.Mapping)
	if f != nil && f.Purpose == federationflow.PurposeTest {
		res, err := s.testResult(ctx, c, at)
		if err != nil {
			return outcome{}, f, c, err
		}
		if err := s.svc.ent.FederationFlow.UpdateOneID(f.ID).SetTestResult(res).Exec(ctx); err != nil {
			return outcome{}, f, c, err
		}
		return outcome{Tested: res}, f, c, nil
	}
	redirect := s.svc.self + "/console"
	if f != nil {
		redirect = f.Redirect
	} else if to, ok := s.svc.checkRedirect(in.RelayState); ok && in.RelayState != "" {
		// An unsolicited Response's RelayState is the IdP's (or anyone's): it may send the
		// person only where a sign-in's redirect may.
		redirect = to
	}
	acc, err := s.resolve(ctx, c, at, origin)
	if err != nil {
		return outcome{}, f, c, err
	}
	out, err := s.svc.signIn(ctx, acc, c.OrgID, amrFederated, in.UserAgent, in.IP)
	out.Redirect = redirect
	return out, f, c, err
}
