package vault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/ent/vaultconnection"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/secret"
)

const (
	// topic invalidates cached connections (key: provider id and user id) on every
	// replica when one is connected, refreshed or revoked.
	topic = "vault_connection"
	// cacheTTL bounds how long a cached connection is trusted without an invalidation.
	cacheTTL = 30 * time.Second
	// skew: an access token with less left than this is refreshed first, so an agent
	// never gets one that dies on its way to the upstream's API.
	skew = 30 * time.Second
	// lease is how long a refresher holds a connection: longer than a refresh can take
	// (the upstream's timeouts), so no other replica starts a second one meanwhile.
	lease = 30 * time.Second
	// waitStep is how often a replica waiting on another's refresh looks again.
	waitStep  = 50 * time.Millisecond
	maxAgents = 20
)

// Audit actions and webhook events of SPEC §23's vault.
const (
	actionConnect = "user.connection_create"
	actionUpdate  = "user.connection_update"
	actionRevoke  = "user.connection_revoke"
)

var agentIDPattern = regexp.MustCompile(`^(tok|cli|dcr)_[0-9A-Za-z]{10,36}$`)

var (
	errNoProvider  = apperr.NotFound("no such provider of your project")
	errNotOffline  = apperr.Conflict("offline_access_required", "this provider does not ask for offline access: a project admin must turn it on")
	errSignInFirst = apperr.Conflict("sign_in_first",
		"sign in with this provider first: its tokens are kept for you only after a sign-in with offline access")
	errNoConnection = apperr.NotFound("no such connection of yours")
	errNotAgent     = apperr.BadRequest("unknown_agent",
		"every agent must be a live agent token (tok_…) or a client (cli_…, dcr_…) of your project: an auth badge's, or a host's client granted in it")
)

// service is SPEC §23's token vault: people's upstream accounts connected for a
// project's agents, and the upstream access tokens those agents exchange their own
// credentials for, refreshed once per expiry on any replica. It knows neither Fiber nor fx.
type service struct {
	ent    *ent.Client
	clock  clock.Clock
	audit  *audit.Recorder
	keys   *secret.Keyring
	bus    invalidation.Bus
	up     identity.Upstreams
	users  identity.ProvenUsers
	agents oauth.Agents // nil without agent tokens
	// clients are the OAuth server's; those that are ProjectClients say whose a client is.
	clients []oauth.Clients
	log     *slog.Logger
	cache   *bearer.Cache[string, *live]
	flights singleflight.Group
	// owner names this process's leases.
	owner     string
	refreshes *prometheus.CounterVec
}

func newOwner() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// live is a connection as exchanges need it, with its access token opened.
type live struct {
	id, projectID, providerID, userID string
	agents                            []string
	access, tokenType, scope          string
	expires                           *time.Time
	broken                            bool
}

// sealedTokens is what a connection keeps sealed (AAD: its id).
type sealedTokens struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	TokenType    string `json:"tokenType"`
}

// key names a connection in the cache and in invalidations (a NOTIFY payload: no NUL).
func key(providerID, userID string) string { return providerID + " " + userID }

// View is a connection as its person sees it: never a token.
type View struct {
	ID                   string     `json:"id"`
	ProjectID            string     `json:"projectId"`
	ProviderID           string     `json:"providerId"`
	ProviderName         string     `json:"providerName"`
	Agents               []string   `json:"agents"`
	Scope                string     `json:"scope"`
	Status               string     `json:"status"`
	AccessTokenExpiresAt *time.Time `json:"accessTokenExpiresAt"`
	LastRefreshedAt      *time.Time `json:"lastRefreshedAt"`
	CreatedAt            time.Time  `json:"createdAt"`
	UpdatedAt            time.Time  `json:"updatedAt"`
}

func (s *service) view(ctx context.Context, r *ent.VaultConnection) View {
	v := View{ID: r.ID, ProjectID: r.ProjectID, ProviderID: r.ProviderID, ProviderName: r.ProviderID, Agents: nonNil(r.Agents), Scope: r.Scope,
		Status: "connected", AccessTokenExpiresAt: utc(r.AccessExpiresAt), LastRefreshedAt: utc(r.LastRefreshedAt),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.BrokenAt != nil {
		v.Status = "needs_reconnect"
	}
	if p, ok, err := s.up.Upstream(ctx, r.ProviderID); err == nil && ok {
		v.ProviderName = p.Name
	}
	return v
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Agent is one of the project's agents a person may choose.
type Agent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// Agents lists the agent tokens of the person's project, for choosing.
func (s *service) Agents(ctx context.Context, p identity.Principal) ([]Agent, error) {
	out := []Agent{}
	if s.agents == nil || p.TenantID == identity.PublicTenant {
		return out, nil
	}
	as, err := s.agents.Agents(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		out = append(out, Agent{ID: a.ID, Name: a.Name, Kind: "ai_agent"})
	}
	return out, nil
}

// Connect connects the person's account with a provider of their project for the agents
// the body names ({ agents: [ids] }): the tokens their latest sign-in with it left on
// their identity move into the connection. With none there, an existing connection only
// gets the new agents.
func (s *service) Connect(ctx context.Context, p identity.Principal, providerID string, raw []byte, origin audit.Origin) (View, bool, error) {
	prov, ok, err := s.up.Upstream(ctx, providerID)
	if err != nil {
		return View{}, false, err
	}
	if !ok || prov.TenantID != p.TenantID || p.TenantID == identity.PublicTenant || !prov.Enabled {
		return View{}, false, errNoProvider
	}
	f := jsonbody.Read(raw)
	agents, st := f.Strings("agents")
	switch {
	case st != jsonbody.OK:
		f.Fail("agents", "required array of agent ids")
	case len(agents) == 0 || len(agents) > maxAgents:
		f.Fail("agents", "1 to 20 agent ids")
	default:
		for _, a := range agents {
			if !agentIDPattern.MatchString(a) {
				f.Fail("agents", "every id is an agent token's (tok_…) or a client's (cli_…, dcr_…)")
				break
			}
		}
	}
	if err := f.Err(); err != nil {
		return View{}, false, err
	}
	slices.Sort(agents)
	agents = slices.Compact(agents)
	if err := s.checkAgents(ctx, p.TenantID, agents); err != nil {
		return View{}, false, err
	}
	if !prov.Offline {
		return View{}, false, errNotOffline
	}
	now := s.clock.Now()
	var out *ent.VaultConnection
	created := false
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		existing, err := tx.VaultConnection.Query().Where(vaultconnection.ProviderID(providerID), vaultconnection.UserID(p.UserID)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return err
		}
		tokens, fresh, err := s.up.TakeTokens(ctx, tx, p.UserID, providerID)
		if err != nil {
			return err
		}
		if !fresh && existing == nil {
			return errSignInFirst
		}
		action := actionUpdate
		switch {
		case existing == nil:
			created, action = true, actionConnect
			id := newID()
			sealed, expires, err := s.seal(id, tokens, "")
			if err != nil {
				return err
			}
			out, err = tx.VaultConnection.Create().SetID(id).SetProjectID(p.TenantID).SetProviderID(providerID).SetUserID(p.UserID).
				SetAgents(agents).SetTokensSealed(sealed).SetNillableAccessExpiresAt(expires).SetScope(tokens.Scope).
				SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
			if err != nil {
				return err
			}
		case fresh:
			sealed, expires, err := s.seal(existing.ID, tokens, "")
			if err != nil {
				return err
			}
			out, err = tx.VaultConnection.UpdateOne(existing).SetAgents(agents).SetTokensSealed(sealed).SetNillableAccessExpiresAt(expires).
				SetScope(tokens.Scope).AddVersion(1).ClearBrokenAt().ClearLeaseUntil().SetLeaseOwner("").SetUpdatedAt(now).Save(ctx)
			if err != nil {
				return err
			}
		default:
			if out, err = tx.VaultConnection.UpdateOne(existing).SetAgents(agents).SetUpdatedAt(now).Save(ctx); err != nil {
				return err
			}
		}
		actor := p.UserID
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &actor, ProjectID: p.TenantID, Action: action, Origin: origin,
			Metadata: map[string]any{"connectionId": out.ID, "providerId": providerID, "userId": p.UserID, "agents": agents}}); err != nil {
			return err
		}
		return s.bus.Publish(ctx, tx, topic, key(providerID, p.UserID))
	})
	if err != nil {
		return View{}, false, err
	}
	return s.view(ctx, out), created, nil
}

func newID() string { return schema.NewID(schema.VaultConnectionIDPrefix) }

// checkAgents refuses agents that are not the project's: agent tokens that are not its
// live ones, clients that are not its (an auth badge's of another project, a host's
// client granted elsewhere or nowhere, an id nobody knows). A connection naming another
// project's agent would otherwise be one more way to confuse who may use it.
func (s *service) checkAgents(ctx context.Context, projectID string, ids []string) error {
	var tokens, clients []string
	for _, id := range ids {
		if strings.HasPrefix(id, schema.AgentTokenIDPrefix) {
			tokens = append(tokens, id)
		} else {
			clients = append(clients, id)
		}
	}
	for _, id := range clients {
		ok, err := s.clientOfProject(ctx, projectID, id)
		if err != nil {
			return err
		}
		if !ok {
			return errNotAgent
		}
	}
	if len(tokens) == 0 {
		return nil
	}
	if s.agents == nil {
		return errNotAgent
	}
	live, err := s.agents.Agents(ctx, projectID)
	if err != nil {
		return err
	}
	for _, id := range tokens {
		if !slices.ContainsFunc(live, func(a oauth.Client) bool { return a.ID == id }) {
			return errNotAgent
		}
	}
	return nil
}

// clientOfProject asks every owner of clients that can tell whether id is the project's.
func (s *service) clientOfProject(ctx context.Context, projectID, id string) (bool, error) {
	for _, c := range s.clients {
		if pc, ok := c.(oauth.ProjectClients); ok {
			if mine, err := pc.ClientOfProject(ctx, projectID, id); err != nil || mine {
				return mine, err
			}
		}
	}
	return false, nil
}

// seal seals tokens under the connection's id; an empty new refresh token keeps the old
// one (the upstream did not rotate it).
func (s *service) seal(id string, t identity.UpstreamTokens, oldRefresh string) (string, *time.Time, error) {
	refresh := t.RefreshToken
	if refresh == "" {
		refresh = oldRefresh
	}
	b, err := json.Marshal(sealedTokens{AccessToken: t.AccessToken, RefreshToken: refresh, TokenType: t.TokenType})
	if err != nil {
		return "", nil, err
	}
	sealed, err := SealedTokens.Seal(s.keys, b, id)
	if err != nil {
		return "", nil, err
	}
	var expires *time.Time
	switch {
	case t.ExpiresIn > 0:
		e := s.clock.Now().Add(t.ExpiresIn)
		expires = &e
	case !t.Expiry.IsZero():
		e := t.Expiry
		expires = &e
	}
	return sealed, expires, nil
}

func (s *service) open(r *ent.VaultConnection) (sealedTokens, error) {
	plain, err := s.keys.Open(r.TokensSealed, []byte(r.ID))
	if err != nil {
		return sealedTokens{}, err
	}
	var t sealedTokens
	err = json.Unmarshal(plain, &t)
	return t, err
}

// Connections are the person's connections, newest first.
func (s *service) Connections(ctx context.Context, userID string) ([]View, error) {
	rows, err := s.ent.VaultConnection.Query().Where(vaultconnection.UserID(userID)).Order(vaultconnection.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(rows))
	for i, r := range rows {
		out[i] = s.view(ctx, r)
	}
	return out, nil
}

// Revoke ends one of the person's connections: its row and tokens go at once, on every
// replica; then the upstream is asked to revoke the grant too (RFC 7009), where it can.
func (s *service) Revoke(ctx context.Context, userID, id string, origin audit.Origin) (bool, error) {
	r, err := s.ent.VaultConnection.Query().Where(vaultconnection.ID(id), vaultconnection.UserID(userID)).Only(ctx)
	if ent.IsNotFound(err) {
		return false, errNoConnection
	}
	if err != nil {
		return false, err
	}
	tokens, openErr := s.open(r)
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.VaultConnection.Delete().Where(vaultconnection.ID(r.ID)).Exec(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errNoConnection
		}
		actor := userID
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &actor, ProjectID: r.ProjectID, Action: actionRevoke, Origin: origin,
			Metadata: map[string]any{"connectionId": r.ID, "providerId": r.ProviderID, "userId": userID}}); err != nil {
			return err
		}
		return s.bus.Publish(ctx, tx, topic, key(r.ProviderID, r.UserID))
	})
	if err != nil {
		return false, err
	}
	if openErr != nil || tokens.RefreshToken == "" {
		return false, nil
	}
	// Revoking the refresh token ends the upstream's grant, its access tokens with it.
	revoked, err := s.up.Revoke(context.WithoutCancel(ctx), r.ProviderID, tokens.RefreshToken, "refresh_token")
	if err != nil {
		s.log.WarnContext(ctx, "upstream revocation failed; the connection is gone here",
			append([]any{"provider", r.ProviderID, "connection", r.ID}, failureAttrs(err)...)...)
		return false, nil
	}
	return revoked, nil
}
