package org

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"errors"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/orgdomain"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/secret"
)

// Verified domains (SPEC §26): an org claims a domain and proves it by a code mailed to
// one of the domain's administrative mailboxes or by a TXT record; a project's domain is
// verified by at most one of its orgs.
const (
	actionDomainAdd    = "org.domain_add"
	actionDomainVerify = "org.domain_verify"
	actionDomainRemove = "org.domain_remove"

	// claimTTL is how long a claim waits for its proof: long enough for a DNS change to
	// go through a customer's change process.
	claimTTL = 7 * 24 * time.Hour
	// maxCodeTries codes tried end a claim, so its 6 digits cannot be guessed (5 in a
	// million per mailed code; claiming again mails a new one, so each 5 guesses cost a mail).
	maxCodeTries = 5
	// renewAfter is how soon a claim whose codes are used up may be made again.
	renewAfter = time.Hour
	// mailEvery is how soon a claim by mail may mail its code again: renewing is the
	// only way to send one, and a domain's admin mailboxes are not the claimer's to
	// flood (an attacker's review: each renewal mailed at once, without end).
	mailEvery   = 5 * time.Minute
	codePurpose = "org-domain-code"
	// challengePrefix is the label under which a domain's TXT proof is published.
	challengePrefix = "_authcore-challenge."
	methodEmail     = "email"
	methodDNS       = "dns"
)

// proofMailboxes are the addresses whose holder speaks for a domain (the mailboxes CAs
// accept for domain validation): any other address could be anyone's.
var proofMailboxes = []string{"admin", "postmaster", "hostmaster", "webmaster"}

//go:embed templates
var templateFS embed.FS

var mails = mail.MustTemplates(templateFS)

// domains keeps orgs' verified domains and their policies, and answers the ways in
// through identity.OrgDomains. It neither speaks HTTP nor reads users.
type domains struct {
	ent   *ent.Client
	audit *audit.Recorder
	// tenants names the project in the mails of domain codes; optional.
	tenants   identity.Tenants
	mail      mail.Sender
	keys      *secret.Keyring
	clock     clock.Clock
	lookupTXT txtLookup
}

func (s *domains) record(ctx context.Context, tx *ent.Tx, a Actor, action, orgID string, md map[string]any) error {
	return record(ctx, s.audit, tx, a, action, orgID, md)
}

// checkDomain is why d cannot be claimed, or "".
func checkDomain(d string) string {
	switch {
	case !identity.ValidDomain(d):
		return "must be a domain name, lower case (example.com), at most 253 characters"
	case identity.SharedMailDomain(d):
		return "a shared mail domain (anyone may have an address there) cannot be an org's"
	}
	return ""
}

// checkProofAddress is why addr cannot receive domain's code, or "".
func checkProofAddress(addr, domain string) string {
	local, at, _ := strings.Cut(addr, "@")
	if at != domain || !slices.Contains(proofMailboxes, local) {
		return "must be admin@, postmaster@, hostmaster@ or webmaster@ the domain"
	}
	return ""
}

// DNSRecord is the TXT record that proves a claim.
type DNSRecord struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Domain is an org's claim to a domain, as the API shows it.
type Domain struct {
	Domain     string     `json:"domain"`
	Status     string     `json:"status"` // pending or verified
	Method     string     `json:"method"`
	Email      *string    `json:"email"`
	VerifiedAt *time.Time `json:"verifiedAt"`
	// ExpiresAt is when a pending claim lapses; null once verified.
	ExpiresAt *time.Time `json:"expiresAt"`
	DNSRecord DNSRecord  `json:"dnsRecord"`
}

func domainView(r *ent.OrgDomain) Domain {
	d := Domain{Domain: r.Domain, Status: "pending", Method: string(r.Method), Email: r.Email,
		DNSRecord: DNSRecord{Name: challengePrefix + r.Domain, Type: "TXT", Value: r.DNSToken}}
	if r.VerifiedAt != nil {
		t := r.VerifiedAt.UTC()
		d.Status, d.VerifiedAt = "verified", &t
	} else {
		t := r.ExpiresAt.UTC()
		d.ExpiresAt = &t
	}
	return d
}

func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	s := n.String()
	return strings.Repeat("0", 6-len(s)) + s, nil
}

// codeMAC binds a code to its org and domain, so a code proves that claim only.
func (s *domains) codeMAC(orgID, domain, code string) string {
	return s.keys.MAC(codePurpose, []byte(orgID+"\x00"+domain+"\x00"+code))
}

// takenByOther says whether another org of project holds domain verified.
func takenByOther(ctx context.Context, c *ent.OrgDomainClient, project, orgID, domain string) (bool, error) {
	return c.Query().Where(orgdomain.ProjectID(project), orgdomain.Domain(domain), orgdomain.VerifiedAtNotNil(),
		orgdomain.OrgIDNEQ(orgID)).Exist(ctx)
}

// ClaimDomain claims domain for an org, or renews its pending claim (a new code and
// record; the codes tried are forgotten an hour after the last claim). A domain the org has verified stays as it is.
// method email mails a code to addr, which checkProofAddress has passed.
func (s *domains) ClaimDomain(ctx context.Context, a Actor, orgID, domain, method, addr string) (Domain, error) {
	if method == methodEmail && !s.mail.Configured() {
		return Domain{}, errNoMail
	}
	token, err := secret.RandomString(32, "abcdefghijklmnopqrstuvwxyz0123456789")
	if err != nil {
		return Domain{}, err
	}
	var code string
	if method == methodEmail {
		if code, err = newCode(); err != nil {
			return Domain{}, err
		}
	}
	now := s.clock.Now()
	var (
		d       *ent.OrgDomain
		orgName string
		renewed bool
	)
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		o, err := row(ctx, tx.Org, a.Project, orgID)
		if err != nil {
			return err
		}
		orgName = o.Name
		if taken, err := takenByOther(ctx, tx.OrgDomain, a.Project, orgID, domain); err != nil || taken {
			return cmpErr(err, errDomainTaken)
		}
		existing, err := tx.OrgDomain.Query().Where(orgdomain.OrgID(orgID), orgdomain.ProjectID(a.Project), orgdomain.Domain(domain)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return err
		}
		if existing != nil && existing.VerifiedAt != nil {
			d, code = existing, ""
			return nil
		}
		// Codes tried count for an hour from the claim, across renewals: renewing must not
		// buy guesses faster than five an hour, so a claim whose codes are used up is
		// renewed only when that hour is over.
		if existing != nil && method == methodEmail && existing.Method == orgdomain.MethodEmail {
			if next := existing.ExpiresAt.Add(-claimTTL + mailEvery); now.Before(next) {
				return errMailedRecently.With("retryAfter", next.UTC().Format(time.RFC3339))
			}
		}
		attempts := 0
		if existing != nil {
			if next := existing.ExpiresAt.Add(-claimTTL + renewAfter); now.Before(next) {
				if attempts = existing.Attempts; attempts >= maxCodeTries {
					return errCodesUsedUp.With("retryAfter", next.UTC().Format(time.RFC3339))
				}
			}
		}
		var email, mac *string
		if method == methodEmail {
			m := s.codeMAC(orgID, domain, code)
			email, mac = &addr, &m
		}
		if existing != nil {
			renewed = true
			d, err = tx.OrgDomain.UpdateOne(existing).SetMethod(orgdomain.Method(method)).SetNillableEmail(email).SetNillableCodeMAC(mac).
				SetAttempts(attempts).SetDNSToken(token).SetExpiresAt(now.Add(claimTTL)).Save(ctx)
			if err == nil && email == nil {
				d, err = tx.OrgDomain.UpdateOne(d).ClearEmail().ClearCodeMAC().Save(ctx)
			}
		} else {
			d, err = tx.OrgDomain.Create().SetProjectID(a.Project).SetOrgID(orgID).SetDomain(domain).SetMethod(orgdomain.Method(method)).
				SetNillableEmail(email).SetNillableCodeMAC(mac).SetDNSToken(token).SetExpiresAt(now.Add(claimTTL)).Save(ctx)
		}
		if err != nil {
			return err
		}
		md := map[string]any{"domain": domain, "method": method, "renewed": renewed}
		if email != nil {
			md["email"] = addr
		}
		return s.record(ctx, tx, a, actionDomainAdd, orgID, md)
	})
	if ent.IsConstraintError(err) { // the same claim made at the same moment
		return Domain{}, errClaimRaced
	}
	if err != nil {
		return Domain{}, err
	}
	if code != "" {
		if err := s.sendCode(ctx, a.Project, addr, domain, orgName, code); err != nil {
			return Domain{}, err
		}
	}
	return domainView(d), nil
}

func (s *domains) sendCode(ctx context.Context, project, to, domain, orgName, code string) error {
	product := "authcore"
	if s.tenants != nil {
		if name, ok, err := s.tenants.TenantName(ctx, project); err == nil && ok {
			product = inline(name)
		}
	}
	text, html, err := mails.Render("domain_code", map[string]any{"Product": product, "Domain": domain, "Org": inline(orgName), "Code": code})
	if err != nil {
		return err
	}
	if err := s.mail.Send(mail.Message{To: to, Subject: "Verify " + domain + " — " + product, Text: text, HTML: html, Purpose: "org_domain_code"}); err != nil {
		return apperr.New(apperr.KindUnavailable, "mail_not_sent", "the code could not be mailed: claim the domain again").Wrap(err)
	}
	return nil
}

// inline keeps user text on its line of a mail's text part.
func inline(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// Domains are an org's claims, verified or pending, by domain; lapsed claims (7 days, or
// the codes tried up) are left out.
func (s *domains) Domains(ctx context.Context, project, orgID string) ([]Domain, error) {
	if _, err := row(ctx, s.ent.Org, project, orgID); err != nil {
		return nil, err
	}
	rows, err := s.ent.OrgDomain.Query().Where(orgdomain.OrgID(orgID), orgdomain.ProjectID(project),
		orgdomain.Or(orgdomain.VerifiedAtNotNil(), orgdomain.And(orgdomain.ExpiresAtGT(s.clock.Now()), orgdomain.AttemptsLT(maxCodeTries)))).
		Order(ent.Asc(orgdomain.FieldDomain)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Domain, len(rows))
	for i, r := range rows {
		out[i] = domainView(r)
	}
	return out, nil
}

// RemoveDomain drops an org's claim, verified or not.
func (s *domains) RemoveDomain(ctx context.Context, a Actor, orgID, domain string) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		if _, err := row(ctx, tx.Org, a.Project, orgID); err != nil {
			return err
		}
		d, err := tx.OrgDomain.Query().Where(orgdomain.OrgID(orgID), orgdomain.ProjectID(a.Project), orgdomain.Domain(domain)).Only(ctx)
		if ent.IsNotFound(err) {
			return errDomainNotFound
		}
		if err != nil {
			return err
		}
		if err := tx.OrgDomain.DeleteOne(d).Exec(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionDomainRemove, orgID, map[string]any{"domain": domain, "wasVerified": d.VerifiedAt != nil})
	})
}

// VerifyDomain proves an org's pending claim: by code (method email), or by the TXT
// record (method dns). A wrong code counts against the claim even though the answer is
// a refusal; the check of the proof and the verification are apart so that count stays.
func (s *domains) VerifyDomain(ctx context.Context, a Actor, orgID, domain string, code *string) (Domain, error) {
	if _, err := row(ctx, s.ent.Org, a.Project, orgID); err != nil {
		return Domain{}, err
	}
	d, err := s.ent.OrgDomain.Query().Where(orgdomain.OrgID(orgID), orgdomain.ProjectID(a.Project), orgdomain.Domain(domain)).Only(ctx)
	if ent.IsNotFound(err) {
		return Domain{}, errDomainNotFound
	}
	if err != nil {
		return Domain{}, err
	}
	if d.VerifiedAt != nil {
		return domainView(d), nil
	}
	now := s.clock.Now()
	if !d.ExpiresAt.After(now) || d.Attempts >= maxCodeTries {
		return Domain{}, errNotProven.With("why", "the claim lapsed (7 days, or too many wrong codes): claim the domain again")
	}
	if taken, err := takenByOther(ctx, s.ent.OrgDomain, a.Project, orgID, domain); err != nil || taken {
		return Domain{}, cmpErr(err, errDomainTaken)
	}
	switch d.Method {
	case orgdomain.MethodEmail:
		if code == nil {
			return Domain{}, errNotProven.With("why", "no code: give the code mailed to "+*d.Email)
		}
		// Every code tried is counted before it is compared, so that guesses sent in
		// parallel are bounded too: the right code verifies only among the first five.
		n, err := s.ent.OrgDomain.Update().Where(orgdomain.ID(d.ID), orgdomain.VerifiedAtIsNil(), orgdomain.AttemptsLT(maxCodeTries),
			orgdomain.ExpiresAtGT(now)).AddAttempts(1).Save(ctx)
		if err != nil {
			return Domain{}, err
		}
		if n != 1 {
			return Domain{}, errNotProven.With("why", "the claim lapsed (too many wrong codes): claim the domain again")
		}
		if d.CodeMAC == nil || subtle.ConstantTimeCompare([]byte(*d.CodeMAC), []byte(s.codeMAC(orgID, domain, *code))) != 1 {
			return Domain{}, errNotProven.With("why", "wrong code").With("attemptsLeft", max(0, maxCodeTries-d.Attempts-1))
		}
	default:
		if code != nil {
			return Domain{}, apperr.Validation(apperr.Issue{Field: "code", Reason: "only a claim proven by mail takes a code; this one is proven by its TXT record"})
		}
		if why := s.txtHolds(ctx, domain, d.DNSToken); why != "" {
			return Domain{}, errNotProven.With("why", why)
		}
	}
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		if taken, err := takenByOther(ctx, tx.OrgDomain, a.Project, orgID, domain); err != nil || taken {
			return cmpErr(err, errDomainTaken)
		}
		// Only the claim as it was checked: not renewed, lapsed or spent meanwhile.
		n, err := tx.OrgDomain.Update().Where(orgdomain.ID(d.ID), orgdomain.VerifiedAtIsNil(), orgdomain.DNSToken(d.DNSToken),
			orgdomain.AttemptsLTE(maxCodeTries), orgdomain.ExpiresAtGT(now)).SetVerifiedAt(now).ClearCodeMAC().Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errNotProven.With("why", "the claim changed meanwhile: verify again")
		}
		return s.record(ctx, tx, a, actionDomainVerify, orgID, map[string]any{"domain": domain, "method": string(d.Method)})
	})
	if ent.IsConstraintError(err) {
		return Domain{}, errDomainTaken
	}
	if err != nil {
		return Domain{}, err
	}
	d.VerifiedAt, d.CodeMAC = &now, nil
	return domainView(d), nil
}

// txtHolds is why the challenge record of domain does not hold token, or "".
func (s *domains) txtHolds(ctx context.Context, domain, token string) string {
	name := challengePrefix + domain
	values, err := s.lookupTXT(ctx, name)
	switch {
	case errors.Is(err, errNoRecord):
		return "no TXT record at " + name
	case err != nil:
		return "the TXT record of " + name + " could not be read: " + err.Error()
	}
	for _, v := range values {
		if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(v)), []byte(token)) == 1 {
			return ""
		}
	}
	return "the TXT records at " + name + " do not hold this claim's value"
}

// DomainOrg is identity.OrgDomains': the policy of the org of project that verified
// domain.
func (s *domains) DomainOrg(ctx context.Context, projectID, domain string) (identity.OrgPolicy, bool, error) {
	d, err := s.ent.OrgDomain.Query().Where(orgdomain.ProjectID(projectID), orgdomain.Domain(strings.ToLower(domain)), orgdomain.VerifiedAtNotNil()).Only(ctx)
	if ent.IsNotFound(err) {
		return identity.OrgPolicy{}, false, nil
	}
	if err != nil {
		return identity.OrgPolicy{}, false, err
	}
	p, err := policyOf(ctx, s.ent.OrgPolicy, projectID, d.OrgID)
	if err != nil {
		return identity.OrgPolicy{}, false, err
	}
	return p.identity(d.OrgID), true, nil
}
