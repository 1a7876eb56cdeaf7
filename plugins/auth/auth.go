// Package auth is the "auth" badge product: machine-to-machine OAuth 2.0 clients. Minting
// an auth badge creates a client (client_id + a secret stored only as its digest); the
// client obtains JWT access tokens from POST /v1/oauth/token with the client-credentials
// grant (RFC 6749 §4.4), signed with the key set served at /.well-known/jwks.json.
package auth

import (
	"context"
	"time"

	"github.com/go-jose/go-jose/v4"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/authclient"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/secret"
)

// Plugin is the product as cmd/authcore/app lists it.
var Plugin = product.Plugin{Module: Module}

// Module contributes the product, its client-secret kind, its clients to the OAuth
// server's client authentication, and the client-credentials grant.
var Module = fx.Module("plugin-auth",
	fx.Provide(New),
	product.AsProduct(func(p *Product) *Product { return p }),
	httpserver.AsModuleRoutes("badge", func(p *Product, g *guard.Guard) []httpserver.Route { return p.keyRoutes(g) }),
	credential.AsKinds(kinds),
	oauth.AsClients(func(p *Product) oauth.Clients { return p }),
	oauth.AsGrant(newClientCredentials),
)

// secretKind prefixes client secrets: ac_cs_….
const secretKind = "cs"

// Product is the auth product.
type Product struct {
	ent    *ent.Client
	reads  *database.Reads
	clock  clock.Clock
	signer oauth.Signer
	cfg    config.Config
	bus    invalidation.Bus
	audit  *audit.Recorder
	// policies bound the agent scopes a client may be granted.
	policies policy.Source
	// names are the badges' names (nil without the badge module).
	names credential.BadgeNames
	// clients caches clients by id (a revoke anywhere drops its entry when it commits), so
	// authenticating a client and judging a client-credentials JWT cost no store query
	// when warm.
	clients *bearer.Cache[string, *storedClient]
}

// clientTopic invalidates the client cache.
const clientTopic = "auth_client"

var (
	_ product.Product      = (*Product)(nil)
	_ product.Configurable = (*Product)(nil)
)

// Params are the product's dependencies.
type Params struct {
	fx.In
	Ent      *ent.Client
	Reads    *database.Reads
	Clock    clock.Clock
	Signer   oauth.Signer
	Config   config.Config
	Bus      invalidation.Bus
	Limits   bearer.Limits
	Audit    *audit.Recorder
	Policies policy.Source
	Names    credential.BadgeNames `optional:"true"`
}

// New returns the product.
func New(p Params) *Product {
	pr := &Product{ent: p.Ent, reads: p.Reads, clock: p.Clock, signer: p.Signer, cfg: p.Config, bus: p.Bus, audit: p.Audit,
		policies: p.Policies, names: p.Names, clients: bearer.NewCache[string, *storedClient](p.Limits.Size, p.Limits.PositiveTTL)}
	bearer.Follow(p.Bus, clientTopic, pr.clients)
	return pr
}

func (*Product) Key() string              { return "auth" }
func (*Product) Description() string      { return "Machine-to-machine auth clients." }
func (*Product) Mintable() (bool, string) { return true, "" }

// Credentials documents what Mint returns (the served OpenAPI document's BadgeCreated).
func (*Product) Credentials() any { return Credentials{} }

// Credentials is the create answer's `auth` object.
type Credentials struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	TokenURL     string `json:"tokenUrl"`
}

// MintOptions takes the agent scopes a badge's client is granted at mint (SPEC §21, §29),
// checked as the scopes route checks them; none when the body has no scopes.
func (p *Product) MintOptions(ctx context.Context, projectID string, body []byte) (product.MintOptions, error) {
	if o, ok := jsonbody.Parse(body); ok {
		if _, st := o.Strings("scopes"); st == jsonbody.Absent {
			return product.MintOptions{}, nil
		}
	}
	scopes, err := p.scopesOf(ctx, projectID, body)
	if err != nil {
		return product.MintOptions{}, err
	}
	return product.MintOptions{Value: scopes, Audit: map[string]any{"scopes": scopes}}, nil
}

// Mint creates the badge's OAuth client inside the badge's transaction, with the agent
// scopes MintOptions took.
func (p *Product) Mint(ctx context.Context, tx *ent.Tx, b product.Badge) (any, error) {
	clientSecret, err := secret.NewToken(secretKind)
	if err != nil {
		return nil, err
	}
	create := tx.AuthClient.Create().
		SetBadgeID(b.ID).SetProjectID(b.ProjectID).SetRole(b.Role).
		SetNillableExpiresAt(b.ExpiresAt).
		SetSecretDigest(secret.DigestOf(clientSecret).Bytes())
	if scopes, ok := b.Options.([]string); ok && len(scopes) > 0 {
		create.SetScopes(scopes)
	}
	c, err := create.Save(ctx)
	if err != nil {
		return nil, err
	}
	return Credentials{ClientID: c.ID, ClientSecret: clientSecret, TokenURL: p.cfg.SelfURL() + oauth.TokenPath}, nil
}

// Revoke retires the badge's client in the revoke's transaction: from its commit on, the
// client gets no token. Tokens already issued live out their (short) lifetime.
func (p *Product) Revoke(ctx context.Context, tx *ent.Tx, b product.Badge) error {
	c, err := tx.AuthClient.Query().Where(authclient.BadgeID(b.ID)).Only(ctx)
	if err != nil {
		return err
	}
	if err := tx.AuthClient.UpdateOne(c).SetRevokedAt(p.clock.Now()).Exec(ctx); err != nil {
		return err
	}
	return p.bus.Publish(ctx, tx, clientTopic, c.ID)
}

// Roll gives the badge's client a new secret inside the roll's transaction; the replaced
// one authenticates until graceUntil. Every replica forgets the cached client when the
// transaction commits.
func (p *Product) Roll(ctx context.Context, tx *ent.Tx, b product.Badge, graceUntil *time.Time) (any, error) {
	c, err := tx.AuthClient.Query().Where(authclient.BadgeID(b.ID)).Only(ctx)
	if err != nil {
		return nil, err
	}
	clientSecret, err := secret.NewToken(secretKind)
	if err != nil {
		return nil, err
	}
	u := tx.AuthClient.UpdateOne(c).SetSecretDigest(secret.DigestOf(clientSecret).Bytes())
	if graceUntil != nil {
		u = u.SetPreviousSecretDigest(c.SecretDigest).SetPreviousExpiresAt(*graceUntil)
	} else {
		u = u.ClearPreviousSecretDigest().ClearPreviousExpiresAt()
	}
	if err := u.Exec(ctx); err != nil {
		return nil, err
	}
	if err := p.bus.Publish(ctx, tx, clientTopic, c.ID); err != nil {
		return nil, err
	}
	return Credentials{ClientID: c.ID, ClientSecret: clientSecret, TokenURL: p.cfg.SelfURL() + oauth.TokenPath}, nil
}

// storedClient is a client as cached: its secret's digest and state, its keys.
type storedClient struct {
	oauth.Client
	digest  []byte
	revoked bool
	keys    jose.JSONWebKeySet
	// previous is the digest of the secret a roll replaced, valid until previousUntil.
	previous      []byte
	previousUntil *time.Time
}

// lookup is the client with id, from the cache; nil when there is none.
func (p *Product) lookup(ctx context.Context, id string) (*storedClient, error) {
	return p.clients.Load(ctx, id, func(ctx context.Context) (*storedClient, error) {
		type row struct {
			*ent.AuthClient
			name string
		}
		r, err := database.Read(ctx, p.reads, clientTopic, id, func(ctx context.Context, h database.Handle) (row, error) {
			c, err := h.Ent.AuthClient.Query().Where(authclient.ID(id)).Only(ctx)
			if err != nil {
				return row{}, err
			}
			// The badge's name is what a person is shown of its client when it asks them
			// something (SPEC §23), rather than an opaque id. It is immutable and written
			// in the client's own transaction, so reading it once per cached client from
			// the badge module's table never sees it change or lag.
			var name string
			if p.names != nil {
				if name, err = p.names.BadgeName(ctx, c.BadgeID); err != nil {
					return row{}, err
				}
			}
			return row{AuthClient: c, name: name}, nil
		})
		if database.IsNoRow(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		c := r.AuthClient
		sc := &storedClient{Client: oauth.Client{ID: c.ID, ProjectID: c.ProjectID, Role: c.Role, ExpiresAt: c.ExpiresAt, Scopes: c.Scopes, Name: r.name},
			digest: c.SecretDigest, revoked: c.RevokedAt != nil, previousUntil: c.PreviousExpiresAt}
		if len(c.Keys) > 0 {
			if sc.keys, err = assertion.ParseKeySet(map[string]any{"keys": c.Keys}); err != nil {
				return nil, err // only keys addKey checked are stored
			}
		}
		if c.PreviousSecretDigest != nil {
			sc.previous = *c.PreviousSecretDigest
		}
		return sc, nil
	})
}

// live reports whether the client with id is live: what its access tokens are worth.
func (p *Product) live(ctx context.Context, id string) (bool, error) {
	c, err := p.lookup(ctx, id)
	if err != nil || c == nil {
		return false, err
	}
	return schema.LiveAt(p.clock.Now(), c.revoked, c.ExpiresAt), nil
}

// Authenticate checks a client id and secret (oauth.Clients). Every failure is the same:
// no client, wrong secret, revoked or expired.
func (p *Product) Authenticate(ctx context.Context, id, sec string) (oauth.Client, bool, error) {
	if !secret.CheckToken(secretKind, sec) {
		return oauth.Client{}, false, nil
	}
	c, err := p.lookup(ctx, id)
	if err != nil || c == nil {
		return oauth.Client{}, false, err
	}
	// The current secret, or the one a roll replaced while in its grace (SPEC §12).
	key, until := schema.Matched(secret.DigestOf(sec).Bytes(), c.digest, c.previous, nil, c.previousUntil)
	if key == nil || (until != nil && !p.clock.Now().Before(*until)) {
		return oauth.Client{}, false, nil
	}
	if live, err := p.live(ctx, id); !live || err != nil {
		return oauth.Client{}, false, err
	}
	return c.Client, true, nil
}
