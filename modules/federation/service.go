package federation

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/federationflow"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/secret"
)

// flowTTL is how long a person has at the upstream before the sign-in they started dies.
const flowTTL = 10 * time.Minute

// RFC 8176 leaves federated and mailed proofs unnamed; these name them in amr.
const (
	amrFederated = "fed"
	amrEmail     = "email"
)

// service decides federated sign-ins (SPEC §20): who a returning subject is, when a new
// one may join an existing account, and what an upstream's answer must prove. It knows
// neither Fiber nor fx.
type service struct {
	ent      *ent.Client
	keys     *secret.Keyring
	clock    clock.Clock
	cfg      config.Config
	store    *store
	up       *upstreams
	users    identity.ProvenUsers
	proofs   identity.AddressProofs
	sessions identity.Sessions
	second   identity.SecondFactor // nil: no MFA module
	tenants  identity.Tenants      // nil: no project module
	orgs     identity.OrgDomains   // nil: no org module
	orgList  identity.Orgs         // nil: no org module
	audit    *audit.Recorder
	mail     mail.Sender
	log      *slog.Logger
	// self is the server's own URL: the callback and mailed links are built from it.
	self string

	org    orgRules
	admin  providerAdmin
	linked linkedIdentities
	saml   samlSignIn
}

// callbackURL is the redirect URI a provider is registered with (SPEC §20).
func callbackURL(self, providerID string) string {
	return self + "/v1/auth-core/providers/" + url.PathEscape(providerID) + "/callback"
}

// startURL is where a sign-in page sends the person to sign in with a provider.
func startURL(self, providerID string) string {
	return self + "/v1/auth-core/providers/" + url.PathEscape(providerID) + "/start"
}

// random is n random bytes, base64url.
func random(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// upstreamOf is p's client, with its secret opened.
func (s *service) upstreamOf(ctx context.Context, p Provider) (*upstream, error) {
	sec, err := s.store.secretOf(p)
	if err != nil {
		return nil, err
	}
	return s.up.get(ctx, p, sec, callbackURL(s.self, p.ID))
}

// started is a sign-in sent to its upstream.
type started struct {
	URL     string
	Browser string // the browser binding cookie's value (new, or the one it had)
	ID      string // the flow's
}

// begin starts a sign-in (or, with linkUser, a link) with provider p: a flow row holding
// the state's digest, the nonce, the PKCE verifier sealed, and the browser's cookie
// digest; then the upstream's authorization URL. Nothing is written if the upstream
// cannot be reached.
// A test flow (an admin's test of an org's connection) signs no one in.
func (s *service) begin(ctx context.Context, p Provider, redirect, browser string, purpose federationflow.Purpose, linkUser *string) (started, error) {
	if !p.Enabled {
		return started{}, errProviderDisabled
	}
	u, err := s.upstreamOf(ctx, p)
	if err != nil {
		return started{}, err
	}
	if browser == "" {
		browser = random(32)
	}
	state, nonce, verifier := random(32), random(32), oauth2.GenerateVerifier()
	id := schema.NewID(schema.FederationFlowIDPrefix)
	sealed, err := sealedVerifier.Seal(s.keys, []byte(verifier), id)
	if err != nil {
		return started{}, err
	}
	if err := s.ent.FederationFlow.Create().SetID(id).SetTenantID(p.TenantID).SetProviderID(p.ID).
		SetStateDigest(secret.DigestOf(state).Bytes()).SetBrowserDigest(secret.DigestOf(browser).Bytes()).SetNonce(nonce).
		SetVerifierSealed(sealed).SetPurpose(purpose).SetNillableLinkUserID(linkUser).SetRedirect(redirect).
		SetExpiresAt(s.clock.Now().Add(flowTTL)).Exec(ctx); err != nil {
		return started{}, err
	}
	return started{URL: u.authURL(state, nonce, verifier), Browser: browser, ID: id}, nil
}

// callback is what the upstream sent the person back with.
type callback struct {
	State, Code, Error, ErrorDescription, Iss string
	Browser                                   string
	UserAgent, IP                             string
	Origin                                    audit.Origin
}

// outcome is a finished first step: signed in (Tokens), or a second factor to give.
type outcome struct {
	User     identity.Account
	Tokens   *identity.Tokens
	MFAToken string
	Methods  []string
	Redirect string
	Linked   bool // a link flow: the identity was added, no session was started
	// Tested is a test flow's mapped answer: no one was signed in.
	Tested map[string]any
}

// finishUpstream spends the flow the state names (once: a replayed callback finds it
// used), trades the code, and signs in, links or refuses. The flow is spent before the
// upstream is called, so a second use of a state fails whatever the first's outcome.
func (s *service) finishUpstream(ctx context.Context, providerID string, cb callback) (outcome, *ent.FederationFlow, error) {
	if cb.State == "" || len(cb.State) > 200 {
		return outcome{}, nil, errInvalidState
	}
	now := s.clock.Now()
	f, err := s.ent.FederationFlow.Query().Where(federationflow.StateDigest(secret.DigestOf(cb.State).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return outcome{}, nil, errInvalidState
	}
	if err != nil {
		return outcome{}, nil, err
	}
	// A test flow is started by an admin's API call and finished in whatever browser signs
	// in to the org's IdP: it is bound to no browser, and signs no one in.
	test := f.Purpose == federationflow.PurposeTest
	if f.ProviderID != providerID || f.UsedAt != nil || !now.Before(f.ExpiresAt) ||
		(!test && !secret.Equal(f.BrowserDigest, secret.DigestOf(cb.Browser).Bytes())) {
		return outcome{}, f, errInvalidState
	}
	n, err := s.ent.FederationFlow.Update().Where(federationflow.ID(f.ID), federationflow.UsedAtIsNil()).SetUsedAt(now).Save(ctx)
	if err != nil {
		return outcome{}, f, err
	}
	if n != 1 {
		return outcome{}, f, errInvalidState
	}
	p, err := s.store.get(ctx, providerID)
	if err != nil {
		return outcome{}, f, err
	}
	if !p.Enabled {
		return outcome{}, f, errProviderDisabled
	}
	if cb.Error != "" {
		why := cb.Error
		if cb.ErrorDescription != "" {
			why += ": " + cb.ErrorDescription
		}
		return outcome{}, f, errUpstreamRefused.Wrap(errors.New(why))
	}
	if cb.Code == "" {
		return outcome{}, f, errUpstreamRefused.Wrap(errors.New("no code"))
	}
	u, err := s.upstreamOf(ctx, p)
	if err != nil {
		return outcome{}, f, err
	}
	// RFC 9207: an upstream that names itself must be the one we sent the person to.
	if cb.Iss != "" && u.verifier != nil && cb.Iss != p.Issuer && u.issuerTemplate == "" {
		return outcome{}, f, errIDToken.Wrap(errors.New("the callback's iss is another issuer"))
	}
	verifier, err := s.keys.Open(f.VerifierSealed, []byte(f.ID))
	if err != nil {
		return outcome{}, f, err
	}
	a, err := s.up.exchange(ctx, u, cb.Code, string(verifier), f.Nonce)
	if err != nil {
		return outcome{}, f, err
	}
	if test {
		c := a.claims
		res := map[string]any{"subject": c.Subject, "email": c.Email, "emailVerified": c.EmailVerified, "emailTrusted": proven(p, c), "name": c.Name}
		if err := s.ent.FederationFlow.UpdateOneID(f.ID).SetTestResult(res).Exec(ctx); err != nil {
			return outcome{}, f, err
		}
		return outcome{Tested: res}, f, nil
	}
	acc, linked, err := s.resolve(ctx, f, p, a, cb.Origin)
	if err != nil {
		return outcome{}, f, err
	}
	if linked {
		return outcome{User: acc, Redirect: f.Redirect, Linked: true}, f, nil
	}
	// Through an org's connection, the session starts in that org (when a member).
	out, err := s.signIn(ctx, acc, p.OrgID, amrFederated, cb.UserAgent, cb.IP)
	out.Redirect = f.Redirect
	return out, f, err
}

// proven is whether the upstream vouches for the address: a provider trusted for email
// that says it is verified (an oauth2 one mapped without a verification claim vouches by
// being trusted).
func proven(p Provider, c claims) bool {
	if c.Email == "" || !p.TrustEmail {
		return false
	}
	if c.VerifiedStated {
		return c.EmailVerified
	}
	return p.Type == "oauth2" && p.Claims.EmailVerified == ""
}

// resolve decides who the upstream's subject is (SPEC §20): its linked user; for a link
// flow, the signed-in person who started it; for a new subject, an existing user only
// when the provider vouches for the address, the user proved it too and the tenant
// allows it; else a new user only when the provider vouches for the address. Every write
// of it (identity, user, audit) is one transaction.
func (s *service) resolve(ctx context.Context, f *ent.FederationFlow, p Provider, a answer, origin audit.Origin) (identity.Account, bool, error) {
	c := a.claims
	existing, err := s.ent.Identity.Query().Where(entidentity.ProviderID(p.ID), entidentity.Subject(c.Subject)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return identity.Account{}, false, err
	}
	vouched := proven(p, c)
	if vouched && p.OrgID != "" {
		// An org's connection is its customer's own identity provider, added by the
		// customer's admins (or a setup link).
		if vouched, err = s.org.vouches(ctx, p.TenantID, p.OrgID, c.Email); err != nil {
			return identity.Account{}, false, err
		}
	}
	now := s.clock.Now()
	link := f.Purpose == federationflow.PurposeLink
	var acc identity.Account
	var create, joinByEmail, createUser bool
	switch {
	case existing != nil && link && existing.UserID != *f.LinkUserID:
		return identity.Account{}, false, errIdentityTaken
	case existing != nil:
		if acc, err = s.users.Account(ctx, existing.UserID); err != nil {
			return identity.Account{}, false, err
		}
	case link:
		if acc, err = s.users.Account(ctx, *f.LinkUserID); err != nil {
			return identity.Account{}, false, err
		}
		create = true
	default:
		if c.Email == "" {
			return identity.Account{}, false, errNoEmail
		}
		found, ok, err := s.users.AccountByEmail(ctx, p.TenantID, c.Email)
		if err != nil {
			return identity.Account{}, false, err
		}
		m, err := s.store.methods(ctx, p.TenantID)
		if err != nil {
			return identity.Account{}, false, err
		}
		switch {
		case ok && vouched && found.EmailVerified && m.AutoLink:
			acc, create, joinByEmail = found, true, true
		case ok:
			return identity.Account{}, false, errAccountExists
		case !vouched:
			return identity.Account{}, false, errEmailNotProven
		case s.cfg.Signup == "closed":
			return identity.Account{}, false, errSignupClosed
		default:
			create, createUser = true, true
		}
	}
	if !link {
		addr := acc.Email
		if createUser {
			addr = c.Email
		}
		// Another provider vouching for an address of a domain that must use its own
		// provider is no way in (SPEC §20); the domain's provider is.
		if err := s.SignInAllowed(ctx, p.TenantID, addr, identity.Via{Method: "provider", ProviderID: p.ID}); err != nil {
			return identity.Account{}, false, err
		}
	}
	if !createUser && acc.ID != "" {
		if err := s.users.Admit(ctx, acc.ID); err != nil {
			return identity.Account{}, false, err
		}
	}
	via := "provider:" + p.ID
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		if createUser {
			if acc, err = s.users.CreateProven(ctx, tx, p.TenantID, c.Email, c.Name); err != nil {
				if errors.Is(err, identity.ErrEmailTaken) {
					return errAccountExists
				}
				return err
			}
			if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: p.TenantID, Action: audit.ActionSignUp, Origin: origin,
				Metadata: map[string]any{"userId": acc.ID, "method": audit.MethodProvider, "via": via}}); err != nil {
				return err
			}
		}
		sealed := ""
		id := schema.NewID(schema.IdentityIDPrefix)
		if existing != nil {
			id = existing.ID
		}
		if p.Offline && a.tokens != nil {
			if sealed, err = s.sealTokens(id, a); err != nil {
				return err
			}
		}
		if create {
			err := tx.Identity.Create().SetID(id).SetTenantID(p.TenantID).SetUserID(acc.ID).SetProviderID(p.ID).SetSubject(c.Subject).
				SetEmail(c.Email).SetEmailVerified(c.EmailVerified).SetTokensSealed(sealed).SetLastUsedAt(now).Exec(ctx)
			if ent.IsConstraintError(err) {
				return errIdentityTaken // another callback linked this subject a moment ago
			}
			if err != nil {
				return err
			}
			how := "explicit"
			switch {
			case joinByEmail:
				how = "email"
			case createUser:
				how = "signup"
			}
			if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: p.TenantID, Action: actionLink, Origin: origin,
				Metadata: map[string]any{"userId": acc.ID, "identityId": id, "providerId": p.ID, "how": how}}); err != nil {
				return err
			}
		} else {
			up := tx.Identity.UpdateOneID(existing.ID).SetEmail(c.Email).SetEmailVerified(c.EmailVerified).SetLastUsedAt(now)
			if sealed != "" {
				up = up.SetTokensSealed(sealed)
			}
			if err := up.Exec(ctx); err != nil {
				return err
			}
		}
		if link {
			return nil
		}
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: p.TenantID, Action: audit.ActionSignIn, Origin: origin,
			Metadata: map[string]any{"userId": acc.ID, "method": audit.MethodProvider, "via": via}}); err != nil {
			return err
		}
		return s.org.connectionJoin(ctx, tx, p, acc)
	})
	return acc, link, err
}

// connectionJoin: a sign-in through an org's connection, of a proven address in a domain
// that org verified, is a proof autoJoin admits (SPEC §26); a connection of one org never
// joins anyone to another, and without autoJoin it joins no one (docs/decisions.md).
func (s orgRules) connectionJoin(ctx context.Context, tx *ent.Tx, p Provider, acc identity.Account) error {
	if p.OrgID == "" || s.orgs == nil || !acc.EmailVerified {
		return nil
	}
	pol, ok, err := s.of(ctx, p.TenantID, acc.Email)
	if err != nil || !ok || pol.OrgID != p.OrgID {
		return err
	}
	return s.orgs.AutoJoin(ctx, tx, p.TenantID, acc.ID, acc.Email)
}

// sealTokens seals an upstream's tokens for a later token vault (SPEC §23), never to be
// returned by these routes; AAD is the identity's id.
func (s *service) sealTokens(identityID string, a answer) (string, error) {
	b, err := json.Marshal(map[string]any{"accessToken": a.tokens.AccessToken, "refreshToken": a.tokens.RefreshToken,
		"idToken": a.idToken, "expiry": a.tokens.Expiry})
	if err != nil {
		return "", err
	}
	return sealedUpstreamTokens.Seal(s.keys, b, identityID)
}

// Audit actions of SPEC §20; the link and unlink are webhook events too.
const (
	actionLink   = "user.identity_link"
	actionUnlink = "user.identity_unlink"
)

// signIn finishes a first step of sign-in: the second step when the user has a factor
// (SPEC §17), else a session.
func (s *service) signIn(ctx context.Context, acc identity.Account, orgID, amr, userAgent, ip string) (outcome, error) {
	if s.second != nil {
		methods, err := s.second.Methods(ctx, acc.ID)
		if err != nil {
			return outcome{}, err
		}
		if len(methods) > 0 {
			token, err := s.second.Challenge(ctx, acc.ID, acc.TenantID)
			if err != nil {
				return outcome{}, err
			}
			return outcome{User: acc, MFAToken: token, Methods: methods}, nil
		}
	}
	t, err := s.sessions.Start(ctx, identity.NewSession{UserID: acc.ID, TenantID: acc.TenantID, UserAgent: userAgent, IP: ip, AMR: []string{amr}, OrgID: orgID})
	if err != nil {
		return outcome{}, err
	}
	return outcome{User: acc, Tokens: &t}, nil
}

// checkRedirect is where a finished sign-in may send the person: a console path, or a URL
// of the server's own origin or an allowed one (AUTHCORE_ALLOWED_ORIGINS). Anything else
// would make the callback an open redirector.
func (s *service) checkRedirect(raw string) (string, bool) {
	if raw == "" {
		return s.self + "/console", true
	}
	if len(raw) > 2048 || strings.ContainsAny(raw, "\\\r\n\t") {
		return "", false
	}
	if strings.HasPrefix(raw, "/") {
		if strings.HasPrefix(raw, "//") || !(raw == "/console" || strings.HasPrefix(raw, "/console/") || strings.HasPrefix(raw, "/console?") || strings.HasPrefix(raw, "/console#")) {
			return "", false
		}
		return s.self + raw, true
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return "", false
	}
	origin := u.Scheme + "://" + u.Host
	for _, o := range append(s.cfg.OwnOrigins(), s.cfg.AllowedOrigins...) {
		if strings.TrimRight(o, "/") == origin {
			return raw, true
		}
	}
	return "", false
}

// prune deletes flows and mail sign-ins nobody can use any more.
func (s *service) prune(ctx context.Context) error {
	cut := s.clock.Now().Add(-time.Hour)
	if _, err := s.ent.FederationFlow.Delete().Where(federationflow.ExpiresAtLT(cut)).Exec(ctx); err != nil {
		return err
	}
	return s.pruneMail(ctx, cut)
}
