package vault

import (
	"context"
	"errors"
	"github.com/authcore/authcore/ent/schema"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/vaultconnection"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
)

var (
	errNoTarget = oauth.Error(apperr.KindInvalid, "invalid_target", "resource must name one upstream provider (idp_…) of the agent's project")
	errSubject  = oauth.Error(apperr.KindInvalid, "invalid_grant", "subject_token is not a live credential of the provider's project")
	// errNotConnected is one answer for every way an agent may not have the token: no
	// connection, another person's, the agent not chosen, revoked. It tells nothing more.
	errNotConnected = oauth.Error(apperr.KindInvalid, "invalid_grant", "no connection of this provider is live for this agent and person")
	errReconnect    = oauth.Error(apperr.KindInvalid, "invalid_grant", "the upstream refused the connection's refresh token: the person must connect again")
	errUpstreamDown = oauth.Error(apperr.KindUnavailable, "temporarily_unavailable",
		"the upstream provider could not be reached to refresh the token; the connection is intact, try again").WithHeader("Retry-After", "5")
	errBusy = oauth.Error(apperr.KindUnavailable, "temporarily_unavailable", "another replica is refreshing the token; try again").WithHeader("Retry-After", "1")
)

// exchange is the token exchange of an agent's own credential for a person's upstream
// access token (RFC 8693, SPEC §23): requested_token_type
// urn:authcore:token-type:upstream-access-token, resource the provider's id.
type exchange struct {
	s     *service
	kinds *kinds
}

// kinds is the credential registry, set once the graph is built (module.go says why).
type kinds struct{ *credential.Registry }

var _ oauth.Exchange = exchange{}

func (exchange) RequestedType() string { return oauth.TokenTypeUpstreamAccess }
func (exchange) Metric() string        { return "upstream_token" }

// ClientAuth: the subject token is the credential; a client that authenticates anyway
// must be the agent it names.
func (exchange) ClientAuth() bool { return false }

// Live: it issues no access token of its own.
func (exchange) Live(context.Context, oauth.Issued) (bool, error) { return false, nil }

func (x exchange) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	form := r.Form
	subject, err := oauth.SubjectAccessToken(form)
	if err != nil {
		return oauth.Token{}, err
	}
	switch {
	case len(form["audience"]) > 0 || form.Get("scope") != "":
		return oauth.Token{}, oauth.InvalidRequest("an upstream token is the connection's: audience and scope do not apply")
	case len(form["resource"]) != 1:
		return oauth.Token{}, errNoTarget
	}
	prov, ok, err := x.s.up.Upstream(ctx, form.Get("resource"))
	if err != nil {
		return oauth.Token{}, err
	}
	if !ok {
		return oauth.Token{}, errNoTarget
	}
	fields, err := x.kinds.Introspect(ctx, subject, prov.TenantID)
	if err != nil {
		return oauth.Token{}, err
	}
	if fields == nil {
		return oauth.Token{}, errSubject
	}
	// A subject bound to a DPoP key (an agent token minted bound, or a token issued under
	// a proof) is worth nothing without a proof by that key (SPEC §22).
	if cnf, ok := fields["cnf"].(map[string]any); ok && cnf["jkt"] != oauth.DPoPKeyOf(ctx) {
		return oauth.Token{}, oauth.ErrDPoPKeyRequired("invalid_grant")
	}
	// The agent is the client an access token was issued to, or the credential itself.
	agent, _ := fields["client_id"].(string)
	sub, _ := fields["sub"].(string)
	if agent == "" {
		agent = sub
	}
	if r.Client != nil && r.Client.ID != agent {
		return oauth.Token{}, errSubject
	}
	user, err := x.person(ctx, prov.TenantID, agent, sub, form.Get("login_hint"))
	if err != nil {
		return oauth.Token{}, err
	}
	// A person their project blocked or deleted (SPEC §25) lends no agent their accounts.
	if err := x.s.users.Admit(ctx, user); err != nil {
		if _, refused := apperr.As(err); refused {
			return oauth.Token{}, errNotConnected
		}
		return oauth.Token{}, err
	}
	c, err := x.s.connection(ctx, prov.ID, user)
	if err != nil {
		return oauth.Token{}, err
	}
	if c == nil || !slices.Contains(c.agents, agent) {
		return oauth.Token{}, errNotConnected
	}
	c, err = x.s.fresh(ctx, c)
	if err != nil {
		return oauth.Token{}, err
	}
	tok := oauth.Token{AccessToken: c.access, IssuedTokenType: oauth.TokenTypeUpstreamAccess, TokenType: c.tokenType, Scope: c.scope}
	if tok.TokenType == "" {
		tok.TokenType = "Bearer"
	}
	if c.expires != nil {
		tok.ExpiresIn = int(c.expires.Sub(x.s.clock.Now()).Seconds())
	}
	x.s.refreshes.WithLabelValues("served").Inc()
	return tok, nil
}

// person is whose connection the agent asks for: the person an access token issued for
// them names (a CIBA approval's), else login_hint (their id or email in the project).
func (x exchange) person(ctx context.Context, projectID, agent, sub, hint string) (string, error) {
	if strings.HasPrefix(sub, schema.UserIDPrefix) && sub != agent {
		if hint != "" && hint != sub {
			return "", oauth.InvalidRequest("login_hint names another person than the subject token")
		}
		return sub, nil
	}
	if hint == "" {
		return "", oauth.InvalidRequest("login_hint is required: the id or email of the person whose connection to use")
	}
	if strings.HasPrefix(hint, schema.UserIDPrefix) {
		acc, err := x.s.users.Account(ctx, hint)
		if err != nil || acc.TenantID != projectID {
			return "", errNotConnected
		}
		return acc.ID, nil
	}
	if a, err := mail.ParseAddress(hint); err != nil || a.Address != hint {
		return "", errNotConnected
	}
	acc, ok, err := x.s.users.AccountByEmail(ctx, projectID, hint)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errNotConnected
	}
	return acc.ID, nil
}

// connection is the person's connection with the provider, from the cache (dropped on
// every replica when it changes), or nil.
func (s *service) connection(ctx context.Context, providerID, userID string) (*live, error) {
	return s.cache.Load(ctx, key(providerID, userID), func(ctx context.Context) (*live, error) {
		r, err := s.ent.VaultConnection.Query().Where(vaultconnection.ProviderID(providerID), vaultconnection.UserID(userID)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return s.liveOf(r)
	})
}

func (s *service) liveOf(r *ent.VaultConnection) (*live, error) {
	t, err := s.open(r)
	if err != nil {
		return nil, err
	}
	return &live{id: r.ID, projectID: r.ProjectID, providerID: r.ProviderID, userID: r.UserID, agents: r.Agents,
		access: t.AccessToken, tokenType: t.TokenType, scope: r.Scope, expires: r.AccessExpiresAt, broken: r.BrokenAt != nil}, nil
}

// usable reports whether c's access token has skew left at least.
func (s *service) usable(c *live) bool {
	return c.expires == nil || s.clock.Now().Add(skew).Before(*c.expires)
}

// fresh is c with an access token that has life left: refreshed, once per expiry for the
// whole deployment, when it has not. In this process one caller refreshes and the others
// wait for it (singleflight); across replicas the one holding the connection's lease
// does, and the others wait for the version it stores.
func (s *service) fresh(ctx context.Context, c *live) (*live, error) {
	if c.broken {
		return nil, errReconnect
	}
	if s.usable(c) {
		return c, nil
	}
	v, err, _ := s.flights.Do(c.id, func() (any, error) {
		// One caller's cancellation must not fail the others waiting on this refresh.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		return s.refresh(ctx, c.id)
	})
	if err != nil {
		return nil, err
	}
	return v.(*live), nil
}

// refresh brings the connection's access token up to date: someone else's refresh if one
// landed meanwhile, else its own under the lease.
func (s *service) refresh(ctx context.Context, id string) (*live, error) {
	for {
		r, err := s.ent.VaultConnection.Get(ctx, id)
		if ent.IsNotFound(err) {
			return nil, errNotConnected // revoked meanwhile
		}
		if err != nil {
			return nil, err
		}
		c, err := s.liveOf(r)
		if err != nil {
			return nil, err
		}
		if c.broken {
			return nil, errReconnect
		}
		if s.usable(c) {
			return c, nil
		}
		now := s.clock.Now()
		n, err := s.ent.VaultConnection.Update().Where(vaultconnection.ID(id), vaultconnection.Version(r.Version),
			vaultconnection.Or(vaultconnection.LeaseUntilIsNil(), vaultconnection.LeaseUntilLT(now))).
			SetLeaseUntil(now.Add(lease)).SetLeaseOwner(s.owner).Save(ctx)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			return s.refreshHeld(ctx, r)
		}
		// Another replica refreshes: wait for its version (or for its lease to lapse).
		select {
		case <-ctx.Done():
			return nil, errBusy
		case <-time.After(waitStep):
		}
	}
}

// failureAttrs are the log attributes of an upstream failure: its class (timeout,
// refused, upstream_5xx, bad_answer, unreachable) and HTTP status, never its text.
func failureAttrs(err error) []any {
	f := identity.FailureOf(err)
	if f.Status != 0 {
		return []any{"cause", f.Class, "status", f.Status}
	}
	return []any{"cause", f.Class}
}

// refreshHeld refreshes under this process's lease. The upstream is called outside any
// transaction (a SQLite writer must not wait on the network); a failure keeps the stored
// tokens as they were and frees the lease, so nothing is lost and the next ask retries.
func (s *service) refreshHeld(ctx context.Context, r *ent.VaultConnection) (*live, error) {
	old, err := s.open(r)
	if err != nil {
		return nil, err
	}
	held := vaultconnection.And(vaultconnection.ID(r.ID), vaultconnection.LeaseOwner(s.owner))
	tokens, err := s.up.Refresh(ctx, r.ProviderID, old.RefreshToken)
	switch {
	case errors.Is(err, identity.ErrUpstreamRefused):
		s.refreshes.WithLabelValues("refused").Inc()
		err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
			if err := tx.VaultConnection.Update().Where(held).SetBrokenAt(s.clock.Now()).ClearLeaseUntil().SetLeaseOwner("").Exec(ctx); err != nil {
				return err
			}
			return s.bus.Publish(ctx, tx, topic, key(r.ProviderID, r.UserID))
		})
		if err != nil {
			return nil, err
		}
		return nil, errReconnect
	case err != nil:
		s.refreshes.WithLabelValues("unavailable").Inc()
		// The class of the failure only: what the upstream answered may echo a token.
		s.log.WarnContext(ctx, "upstream token refresh failed; the agent is answered 503 and the connection kept",
			append([]any{"provider", r.ProviderID, "connection", r.ID}, failureAttrs(err)...)...)
		if err := s.ent.VaultConnection.Update().Where(held).ClearLeaseUntil().SetLeaseOwner("").Exec(ctx); err != nil {
			return nil, err
		}
		return nil, errUpstreamDown
	}
	sealed, expires, err := s.seal(r.ID, tokens, old.RefreshToken)
	if err != nil {
		return nil, err
	}
	var out *ent.VaultConnection
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		now := s.clock.Now()
		up := tx.VaultConnection.Update().Where(held).SetTokensSealed(sealed).SetNillableAccessExpiresAt(expires).AddVersion(1).
			ClearLeaseUntil().SetLeaseOwner("").SetLastRefreshedAt(now).SetUpdatedAt(now)
		if tokens.Scope != "" {
			up = up.SetScope(tokens.Scope)
		}
		n, err := up.Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 { // revoked while the upstream answered
			return errNotConnected
		}
		if out, err = tx.VaultConnection.Get(ctx, r.ID); err != nil {
			return err
		}
		return s.bus.Publish(ctx, tx, topic, key(r.ProviderID, r.UserID))
	})
	if err != nil {
		return nil, err
	}
	s.refreshes.WithLabelValues("refreshed").Inc()
	return s.liveOf(out)
}
