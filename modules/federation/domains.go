package federation

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/providerdomain"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

const (
	domainKind = "dom" // ac_dom_…
	domainTTL  = 24 * time.Hour
	// DomainProofPath is the console page a postmaster's link opens.
	DomainProofPath = "/console/domain"
)

func domainOf(email string) string {
	_, d, ok := strings.Cut(email, "@")
	if !ok {
		return ""
	}
	return strings.ToLower(d)
}

// Domain is a provider's claimed domain, as admins see it.
type Domain struct {
	Domain     string     `json:"domain"`
	Verified   bool       `json:"verified"`
	VerifiedAt *time.Time `json:"verifiedAt"`
	// Proof is how it was or is being proven: "admin_email" or "postmaster".
	Proof string `json:"proof"`
}

func domainView(r *ent.ProviderDomain) Domain {
	d := Domain{Domain: r.Domain, Verified: r.VerifiedAt != nil, Proof: "postmaster"}
	if r.VerifiedAt != nil {
		t := r.VerifiedAt.UTC()
		d.VerifiedAt = &t
		if r.ProofDigest == nil {
			d.Proof = "admin_email"
		}
	}
	return d
}

// claimDomain claims domain for provider p (SPEC §20): proven at once when the admin's own
// address is in it and verified, else by a link mailed to postmaster@domain.
func (s *service) claimDomain(ctx context.Context, p Provider, domain string, admin identity.Account) (Domain, error) {
	if !identity.ValidDomain(domain) {
		return Domain{}, apperr.Validation(apperr.Issue{Field: "domain", Reason: "must be a domain name, lower case (example.com)"})
	}
	existing, err := s.ent.ProviderDomain.Query().Where(providerdomain.TenantID(p.TenantID), providerdomain.Domain(domain)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return Domain{}, err
	}
	if existing != nil && existing.ProviderID != p.ID {
		return Domain{}, errDomainTaken
	}
	if existing != nil && existing.VerifiedAt != nil {
		return domainView(existing), nil
	}
	now := s.clock.Now()
	if admin.EmailVerified && domainOf(admin.Email) == domain && !identity.SharedMailDomain(domain) {
		var row *ent.ProviderDomain
		if existing != nil {
			row, err = s.ent.ProviderDomain.UpdateOneID(existing.ID).SetVerifiedAt(now).ClearProofDigest().ClearProofExpiresAt().Save(ctx)
			if row != nil {
				row.ProofDigest = nil // cleared: the admin's address proved it
			}
		} else {
			row, err = s.ent.ProviderDomain.Create().SetTenantID(p.TenantID).SetProviderID(p.ID).SetDomain(domain).SetVerifiedAt(now).Save(ctx)
		}
		if ent.IsConstraintError(err) {
			return Domain{}, errDomainTaken
		}
		if err != nil {
			return Domain{}, err
		}
		return domainView(row), nil
	}
	if !s.mail.Configured() {
		return Domain{}, errMailNotConfigured.With("why", "your own verified address is not in this domain, so the proof is a mail to postmaster@"+domain)
	}
	token, err := secret.NewToken(domainKind)
	if err != nil {
		return Domain{}, err
	}
	digest := secret.DigestOf(token).Bytes()
	var row *ent.ProviderDomain
	if existing != nil {
		row, err = s.ent.ProviderDomain.UpdateOneID(existing.ID).SetProofDigest(digest).SetProofExpiresAt(now.Add(domainTTL)).Save(ctx)
	} else {
		row, err = s.ent.ProviderDomain.Create().SetTenantID(p.TenantID).SetProviderID(p.ID).SetDomain(domain).
			SetProofDigest(digest).SetProofExpiresAt(now.Add(domainTTL)).Save(ctx)
	}
	if ent.IsConstraintError(err) {
		return Domain{}, errDomainTaken
	}
	if err != nil {
		return Domain{}, err
	}
	link := s.self + DomainProofPath + "?token=" + url.QueryEscape(token)
	if err := s.send(ctx, p.TenantID, "postmaster@"+domain, "domain", "Confirm "+domain+" for single sign-on",
		map[string]any{"Domain": domain, "Provider": inline(p.Name), "Link": link}); err != nil {
		return Domain{}, err
	}
	return domainView(row), nil
}

// proveDomain spends a postmaster's proof token.
func (s *service) proveDomain(ctx context.Context, token string) (Domain, string, error) {
	if !secret.CheckToken(domainKind, token) {
		return Domain{}, "", errInvalidToken
	}
	now := s.clock.Now()
	digest := secret.DigestOf(token).Bytes()
	row, err := s.ent.ProviderDomain.Query().Where(providerdomain.ProofDigest(digest), providerdomain.VerifiedAtIsNil(),
		providerdomain.ProofExpiresAtGT(now)).Only(ctx)
	if ent.IsNotFound(err) {
		return Domain{}, "", errInvalidToken
	}
	if err != nil {
		return Domain{}, "", err
	}
	n, err := s.ent.ProviderDomain.Update().Where(providerdomain.ID(row.ID), providerdomain.VerifiedAtIsNil(), providerdomain.ProofDigest(digest)).
		SetVerifiedAt(now).Save(ctx)
	if err != nil {
		return Domain{}, "", err
	}
	if n != 1 {
		return Domain{}, "", errInvalidToken
	}
	row.VerifiedAt = &now
	return domainView(row), row.ProviderID, nil
}

func (s *service) dropDomain(ctx context.Context, p Provider, domain string) error {
	n, err := s.ent.ProviderDomain.Delete().Where(providerdomain.TenantID(p.TenantID), providerdomain.ProviderID(p.ID), providerdomain.Domain(domain)).Exec(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errDomainNotFound
	}
	return nil
}

// providerFor is the enabled provider whose proven domain holds addr, if any.
func (s *service) providerFor(ctx context.Context, tenant, addr string) (Provider, bool, error) {
	d := domainOf(addr)
	if d == "" {
		return Provider{}, false, nil
	}
	row, err := s.ent.ProviderDomain.Query().Where(providerdomain.TenantID(tenant), providerdomain.Domain(d), providerdomain.VerifiedAtNotNil()).Only(ctx)
	if ent.IsNotFound(err) {
		return Provider{}, false, nil
	}
	if err != nil {
		return Provider{}, false, err
	}
	p, err := s.store.get(ctx, row.ProviderID)
	if err == errProviderNotFound || (err == nil && !p.Enabled) {
		return Provider{}, false, nil
	}
	return p, err == nil, err
}

// SignInAllowed is identity.SignInRules' one rule of enterprise SSO by domain (SPEC §20,
// §26): an address whose domain an org verified, under that org's ssoRequired, signs in
// through one of the org's connections and no other way; else an address whose domain's
// provider requires itself signs in through that provider. No other way means not a
// password, a mailed link or code, a passkey alone, nor another provider that vouches for
// the address. Every way in asks it with the account's address before a session or a
// second step; SAML connections (SPEC §27) belong here too, as org connections.
func (s *service) SignInAllowed(ctx context.Context, tenant, email string, via identity.Via) error {
	addr, ok := identity.NormalizeEmail(email)
	if !ok {
		return nil // each way in answers a bad address as it always did
	}
	pol, ok, err := s.org.of(ctx, tenant, addr)
	if err != nil {
		return err
	}
	if ok && pol.SSORequired {
		return s.org.admits(ctx, tenant, pol.OrgID, via)
	}
	p, ok, err := s.providerFor(ctx, tenant, addr)
	if err != nil || !ok || !p.SSORequired {
		return err
	}
	if via.Method == "provider" && via.ProviderID == p.ID {
		return nil
	}
	return errSSORequired.With("providerId", p.ID)
}

var errSSORequired = apperr.New(apperr.KindForbidden, "sso_required", "addresses of this domain sign in with their organisation's identity provider")

// orgRefusal: err is an org's ssoRequired refusing an address.
func orgRefusal(err error) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == errSSORequired.Code && e.Fields["orgId"] != nil
}

// orgRules are the organisations' part of the rules of the ways in (SPEC §26), through
// identity.OrgDomains; nil orgs (no org module) has none.
type orgRules struct {
	orgs  identity.OrgDomains
	store *store
	saml  samlAdmin
}

// orgConn is an org's connection, OIDC or SAML, as discovery and refusals name it.
type orgConn struct{ ID, Name, StartURL string }

// connection is the org's connection people are sent to: its oldest enabled one, OIDC
// or SAML (SPEC §26, §27).
func (s orgRules) connection(ctx context.Context, self, tenant, orgID string) (orgConn, bool, error) {
	p, found, err := s.store.orgConnection(ctx, tenant, orgID)
	if err != nil {
		return orgConn{}, false, err
	}
	sc, err := s.saml.list(ctx, tenant, orgID)
	if err != nil {
		return orgConn{}, false, err
	}
	for _, c := range sc {
		if c.Enabled && (!found || c.CreatedAt.Before(p.CreatedAt)) {
			return orgConn{ID: c.ID, Name: c.Name, StartURL: samlLoginURL(self, c.ID)}, true, nil
		}
	}
	if !found {
		return orgConn{}, false, nil
	}
	return orgConn{ID: p.ID, Name: p.Name, StartURL: startURL(self, p.ID)}, true, nil
}

// of is the policy of the org that verified addr's domain in tenant's project, if any.
func (s orgRules) of(ctx context.Context, tenant, addr string) (identity.OrgPolicy, bool, error) {
	d := domainOf(addr)
	if s.orgs == nil || d == "" || tenant == identity.PublicTenant {
		return identity.OrgPolicy{}, false, nil // the dashboard tenant has no orgs
	}
	return s.orgs.DomainOrg(ctx, tenant, d)
}

// vouches is the one rule of an org's connections, OIDC or SAML: they vouch only for
// addresses of domains their own org proved, never for another org's people or anyone
// else's (an attacker's review: any address, then linked to its account, was a takeover
// of the project's users). addr is normalised.
func (s orgRules) vouches(ctx context.Context, tenant, orgID, addr string) (bool, error) {
	pol, ok, err := s.of(ctx, tenant, addr)
	return err == nil && ok && pol.OrgID == orgID, err
}

// orgAdmits: under an org's ssoRequired, only a provider bound to that org is a way in.
// The refusal names the org and, when it has one enabled, the connection to use.
func (s orgRules) admits(ctx context.Context, tenant, orgID string, via identity.Via) error {
	if via.Method == "provider" {
		p, err := s.store.getIn(ctx, tenant, via.ProviderID)
		if err != nil && err != errProviderNotFound {
			return err
		}
		if err == nil && p.OrgID == orgID {
			return nil
		}
	}
	if via.Method == "saml" {
		c, err := s.saml.get(ctx, tenant, via.ProviderID)
		if err != nil && err != errSAMLNotFound {
			return err
		}
		if err == nil && c.OrgID == orgID {
			return nil
		}
	}
	e := errSSORequired.With("orgId", orgID)
	c, ok, err := s.connection(ctx, "", tenant, orgID)
	if err != nil {
		return err
	}
	if ok {
		e = e.With("providerId", c.ID)
	}
	return e
}

var _ identity.SignInRules = (*service)(nil)

// PasswordAllowed is the account module's question (SPEC §20): password sign-in off for
// the tenant, or an address whose domain requires its provider.
func (s *service) PasswordAllowed(ctx context.Context, tenant, email string) error {
	return s.builtInAllowed(ctx, tenant, email, "password")
}

// builtInAllowed: the tenant has the built-in method on (password, or email for mailed
// codes and links), and the address's domain does not require its identity provider.
func (s *service) builtInAllowed(ctx context.Context, tenant, email, method string) error {
	m, err := s.store.methods(ctx, tenant)
	if err != nil {
		return err
	}
	switch {
	case method == "password" && !m.Password:
		return errPasswordDisabled
	case method == "email" && !m.EmailLink:
		return errMethodDisabled
	}
	return s.SignInAllowed(ctx, tenant, email, identity.Via{Method: method})
}
