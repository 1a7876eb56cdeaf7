// Package auth is the "auth" badge product: machine-to-machine OAuth 2.0 clients. Minting
// an auth badge creates a client (client_id + a secret stored only as its digest); the
// client obtains JWT access tokens from POST /v1/oauth/token with the client-credentials
// grant (RFC 6749 §4.4), signed with the key set served at /.well-known/jwks.json.
package auth

import (
	"context"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/authclient"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
	"github.com/prometheus/client_golang/prometheus"
)

// Module contributes the product and the token endpoint.
var Module = fx.Module("plugin-auth",
	fx.Provide(New),
	product.AsProduct(func(p *Product) *Product { return p }),
	fx.Provide(newResults),
	metrics.AsCollector(func(r *results) prometheus.Collector { return r.CounterVec }),
	httpserver.AsRoutes(func(p *Product, l *ratelimit.Limiters, agents identity.AgentTokens, m *metrics.Credentials, r *results) []httpserver.Route {
		return (&tokenEndpoint{p: p, limits: l, agents: agents, issued: m.Issued.WithLabelValues("exchanged", ""),
			results: r.MustCurryWith(prometheus.Labels{"endpoint": "token"})}).routes()
	}),
)

// TokenPath is where clients get access tokens.
const TokenPath = "/v1/oauth/token"

// secretKind prefixes client secrets: ac_cs_….
const secretKind = "cs"

// Product is the auth product.
type Product struct {
	ent    *ent.Client
	clock  clock.Clock
	signer identity.TokenSigner
	cfg    config.Config
}

var _ product.Product = (*Product)(nil)

// New returns the product.
func New(client *ent.Client, c clock.Clock, signer identity.TokenSigner, cfg config.Config) *Product {
	return &Product{ent: client, clock: c, signer: signer, cfg: cfg}
}

func (*Product) Key() string              { return "auth" }
func (*Product) Description() string      { return "Machine-to-machine auth clients." }
func (*Product) Mintable() (bool, string) { return true, "" }

// Credentials is the create answer's `auth` object.
type Credentials struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	TokenURL     string `json:"tokenUrl"`
}

// Mint creates the badge's OAuth client inside the badge's transaction.
func (p *Product) Mint(ctx context.Context, tx *ent.Tx, b product.Badge) (any, error) {
	clientSecret, err := secret.NewToken(secretKind)
	if err != nil {
		return nil, err
	}
	c, err := tx.AuthClient.Create().
		SetBadgeID(b.ID).SetProjectID(b.ProjectID).SetRole(b.Role).
		SetNillableExpiresAt(b.ExpiresAt).
		SetSecretDigest(secret.DigestOf(clientSecret).Bytes()).
		Save(ctx)
	if err != nil {
		return nil, err
	}
	return Credentials{ClientID: c.ID, ClientSecret: clientSecret, TokenURL: b.BaseURL + TokenPath}, nil
}

// Revoke retires the badge's client in the revoke's transaction: from its commit on, the
// client gets no token. Tokens already issued live out their (short) lifetime.
func (p *Product) Revoke(ctx context.Context, tx *ent.Tx, b product.Badge) error {
	return tx.AuthClient.Update().
		Where(authclient.BadgeID(b.ID), authclient.RevokedAtIsNil()).
		SetRevokedAt(p.clock.Now()).
		Exec(ctx)
}

// client is a live client that proved its secret.
type client struct {
	id, projectID, role string
	expiresAt           *time.Time
}

// authenticate checks a client id and secret. Every failure is the same: no client, wrong
// secret, revoked or expired.
func (p *Product) authenticate(ctx context.Context, id, sec string) (client, bool, error) {
	if !secret.CheckToken(secretKind, sec) {
		return client{}, false, nil
	}
	c, err := p.ent.AuthClient.Query().Where(authclient.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return client{}, false, nil
	}
	if err != nil {
		return client{}, false, err
	}
	d := secret.DigestOf(sec)
	if !secret.Equal(c.SecretDigest, d.Bytes()) || c.RevokedAt != nil {
		return client{}, false, nil
	}
	if c.ExpiresAt != nil && !p.clock.Now().Before(*c.ExpiresAt) {
		return client{}, false, nil
	}
	return client{id: c.ID, projectID: c.ProjectID, role: c.Role, expiresAt: c.ExpiresAt}, true, nil
}

// results counts the OAuth endpoints' answers by endpoint and result ("ok" or the RFC 6749
// error code): authcore_oauth_requests_total.
type results struct{ *prometheus.CounterVec }

func newResults() *results {
	return &results{prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authcore_oauth_requests_total",
		Help: "OAuth token, introspection and revocation requests, by endpoint and result.",
	}, []string{"endpoint", "result"})}
}
