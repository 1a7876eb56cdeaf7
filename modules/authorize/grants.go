package authorize

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/grantrefreshtoken"
	"github.com/authcore/authcore/ent/oauthclient"
	"github.com/authcore/authcore/ent/oauthgrant"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/secret"
)

// grantTopic invalidates cached grant liveness when a grant is revoked.
const grantTopic = "oauth_grant"

// The audit actions (and webhook events) of grants (SPEC §16).
const (
	actionCreate = "oauth.grant_create"
	actionRevoke = "oauth.grant_revoke"
)

// grants keeps the grants people approved. Whether a grant is live is cached (a revoke
// anywhere drops the entry when it commits, on every replica), so introspecting its
// access tokens costs no store query when warm.
type grants struct {
	ent   *ent.Client
	audit *audit.Recorder
	bus   invalidation.Bus
	reads *database.Reads
	clock clock.Clock
	live  *bearer.Cache[string, grantState]
}

// grantState is what tokens need of their grant: whether it is live, and whose.
type grantState struct {
	Live              bool
	UserID, ProjectID string
}

func newGrants(c *ent.Client, reads *database.Reads, rec *audit.Recorder, bus invalidation.Bus, clk clock.Clock, l bearer.Limits) *grants {
	g := &grants{ent: c, reads: reads, audit: rec, bus: bus, clock: clk, live: bearer.NewCache[string, grantState](l.Size, l.NegativeTTL)}
	bearer.Follow(bus, grantTopic, g.live)
	return g
}

// state reads whether grant id is live.
func (g *grants) state(ctx context.Context, id string) (grantState, error) {
	return g.live.Load(ctx, id, func(ctx context.Context) (grantState, error) {
		row, err := database.Read(ctx, g.reads, grantTopic, id, func(ctx context.Context, h database.Handle) (*ent.OAuthGrant, error) {
			return h.Ent.OAuthGrant.Get(ctx, id)
		})
		if database.IsNoRow(err) {
			return grantState{}, nil
		}
		if err != nil {
			return grantState{}, err
		}
		return grantState{Live: row.RevokedAt == nil, UserID: row.UserID, ProjectID: row.ProjectID}, nil
	})
}

// approval is what a person approved.
type approval struct {
	ClientID, ClientName, ClientHost string
	UserID, ProjectID                string
	Scopes, Resources                []string
}

// covering finds the live grant of the same client, person and project that covers a
// request already: approving again would add nothing.
func (g *grants) covering(ctx context.Context, a approval) (*ent.OAuthGrant, error) {
	rows, err := g.ent.OAuthGrant.Query().Where(oauthgrant.UserID(a.UserID), oauthgrant.ClientID(a.ClientID),
		oauthgrant.ProjectID(a.ProjectID), oauthgrant.RevokedAtIsNil()).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if subset(a.Scopes, r.Scopes) && subset(a.Resources, r.Resources) {
			return r, nil
		}
	}
	return nil, nil
}

// held is what the live grant of the same client, person and project holds of a's
// scopes already: the consent page asks only about the rest (SPEC §21's scope step-up).
func (g *grants) held(ctx context.Context, a approval) ([]string, error) {
	row, err := g.ent.OAuthGrant.Query().Where(oauthgrant.UserID(a.UserID), oauthgrant.ClientID(a.ClientID),
		oauthgrant.ProjectID(a.ProjectID), oauthgrant.RevokedAtIsNil()).First(ctx)
	if ent.IsNotFound(err) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, s := range a.Scopes {
		if slices.Contains(row.Scopes, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func subset(a, of []string) bool {
	for _, x := range a {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}

// approve records an approval in tx: it widens the person's live grant to the client on
// the project, or creates one (audited, an event).
func (g *grants) approve(ctx context.Context, tx *ent.Tx, a approval, origin audit.Origin) (*ent.OAuthGrant, error) {
	now := g.clock.Now()
	existing, err := tx.OAuthGrant.Query().Where(oauthgrant.UserID(a.UserID), oauthgrant.ClientID(a.ClientID),
		oauthgrant.ProjectID(a.ProjectID), oauthgrant.RevokedAtIsNil()).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	if existing != nil {
		return existing.Update().SetScopes(oauth.Union(existing.Scopes, a.Scopes)).SetResources(oauth.Union(existing.Resources, a.Resources)).
			SetClientName(a.ClientName).SetClientHost(a.ClientHost).SetUpdatedAt(now).Save(ctx)
	}
	row, err := tx.OAuthGrant.Create().SetClientID(a.ClientID).SetClientName(a.ClientName).SetClientHost(a.ClientHost).
		SetUserID(a.UserID).SetProjectID(a.ProjectID).SetScopes(a.Scopes).SetResources(a.Resources).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return nil, err
	}
	if a.ProjectID == "" {
		// A personal grant (SPEC §25) belongs to no project, and audit logs are projects':
		// the person's own grant list is its record.
		return row, nil
	}
	actor := a.UserID
	_, err = g.audit.Record(ctx, tx, audit.Event{ActorID: &actor, ProjectID: a.ProjectID, Action: actionCreate, Origin: origin,
		Metadata: map[string]any{"grantId": row.ID, "clientId": a.ClientID, "clientHost": a.ClientHost, "userId": a.UserID, "scopes": a.Scopes, "resources": a.Resources}})
	return row, err
}

// ending is why and how a grant ends: its audit action ("" is oauth.grant_revoke; a leak
// report records its own) and the reason and metadata the record carries.
type ending struct {
	Actor *string
	// ActorType is what Actor names; empty as audit.Event says.
	ActorType audit.ActorType
	Action    string
	Reason    string
	Metadata  map[string]any
	Origin    audit.Origin
}

// revoke ends a grant: its refresh tokens refuse at once and its access tokens introspect
// inactive on every replica as the revoke commits. false when it was not live.
func (g *grants) revoke(ctx context.Context, id string, e ending) (bool, error) {
	revoked := false
	err := database.WithTx(ctx, g.ent, func(tx *ent.Tx) error {
		row, err := tx.OAuthGrant.Get(ctx, id)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		revoked, err = g.end(ctx, tx, row, e)
		return err
	})
	return revoked, err
}

// end revokes row in tx, audited, with its invalidation; false when it was not live.
func (g *grants) end(ctx context.Context, tx *ent.Tx, row *ent.OAuthGrant, e ending) (bool, error) {
	n, err := tx.OAuthGrant.Update().Where(oauthgrant.ID(row.ID), oauthgrant.RevokedAtIsNil()).SetRevokedAt(g.clock.Now()).Save(ctx)
	if err != nil || n == 0 {
		return false, err
	}
	action := e.Action
	if action == "" {
		action = actionRevoke
	}
	md := map[string]any{"grantId": row.ID, "clientId": row.ClientID, "userId": row.UserID, "reason": e.Reason}
	for k, v := range e.Metadata {
		md[k] = v
	}
	if row.ProjectID != "" { // a personal grant has no project log (approve says why)
		if _, err := g.audit.Record(ctx, tx, audit.Event{ActorID: e.Actor, ActorType: e.ActorType, ProjectID: row.ProjectID, Action: action, Origin: e.Origin, Metadata: md}); err != nil {
			return false, err
		}
	}
	return true, g.bus.Publish(ctx, tx, grantTopic, row.ID)
}

var _ oauth.GrantEnder = (*grants)(nil)

// EndGrants is oauth.GrantEnder: the grants a member's removal, a resource's deletion or
// a new password leaves without what they were approved on (SPEC §9b).
func (g *grants) EndGrants(ctx context.Context, tx *ent.Tx, of oauth.GrantsOf, e oauth.GrantEnding) (int, error) {
	if of.ProjectID == "" && of.UserID == "" {
		return 0, errors.New("authorize: EndGrants needs a project or a user")
	}
	q := tx.OAuthGrant.Query().Where(oauthgrant.RevokedAtIsNil())
	if of.ProjectID != "" {
		q = q.Where(oauthgrant.ProjectID(of.ProjectID))
	}
	if of.UserID != "" {
		q = q.Where(oauthgrant.UserID(of.UserID))
	}
	rows, err := q.All(ctx)
	if err != nil {
		return 0, err
	}
	ended := 0
	for _, row := range rows {
		if of.Resource != "" && !namesResource(row.Resources, of.Resource) {
			continue
		}
		ok, err := g.end(ctx, tx, row, ending{Actor: e.ActorID, Reason: e.Reason, Origin: e.Origin})
		if err != nil {
			return ended, err
		}
		if ok {
			ended++
		}
	}
	return ended, nil
}

// namesResource reports whether a grant's resources hold uri in any spelling.
func namesResource(resources []string, uri string) bool {
	want, err := resource.Canonical(uri)
	if err != nil {
		return false
	}
	for _, r := range resources {
		if c, err := resource.Canonical(r); err == nil && c == want {
			return true
		}
	}
	return false
}

// grantView is a grant as the API shows it.
type grantView struct {
	ID         string     `json:"id"`
	ClientID   string     `json:"clientId"`
	ClientName string     `json:"clientName"`
	ClientHost string     `json:"clientHost"`
	IDHost     *string    `json:"clientIdHost"`
	UserID     string     `json:"userId"`
	ProjectID  string     `json:"projectId"`
	Scopes     []string   `json:"scopes"`
	Resources  []string   `json:"resources"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
}

func viewOf(r *ent.OAuthGrant) grantView {
	v := grantView{ID: r.ID, ClientID: r.ClientID, ClientName: r.ClientName, ClientHost: r.ClientHost, IDHost: nullable(idHostOf(r.ClientID, r.ClientHost)), UserID: r.UserID,
		ProjectID: r.ProjectID, Scopes: nonNil(r.Scopes), Resources: nonNil(r.Resources), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.RevokedAt != nil {
		t := r.RevokedAt.UTC()
		v.RevokedAt = &t
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// refreshKind prefixes grant refresh tokens: ac_gr_….
const refreshKind = "gr"

// kinds: grant refresh tokens (SPEC §15, §16). Presenting one to RFC 7009 or in a leak
// report ends its grant, as reuse of a rotated one does.
func (s *service) kinds() []credential.Kind {
	return []credential.Kind{{
		Name: "oauth_refresh_token", Prefix: secret.Prefix(refreshKind), Pattern: secret.Pattern(refreshKind),
		Revoke: func(ctx context.Context, token string, r credential.Revocation) error {
			row, err := s.ent.GrantRefreshToken.Query().Where(grantrefreshtoken.Digest(secret.DigestOf(token).Bytes())).Only(ctx)
			if ent.IsNotFound(err) {
				return credential.ErrNotLive
			}
			if err != nil {
				return err
			}
			// A refresh token is its client's: the client revoked it, unless a leak report did.
			grant, err := s.ent.OAuthGrant.Get(ctx, row.GrantID)
			if ent.IsNotFound(err) {
				return credential.ErrNotLive
			}
			if err != nil {
				return err
			}
			actor, actorType := r.By(audit.ClientActor(grant.ClientID), grant.ClientID)
			ok, err := s.grants.revoke(ctx, row.GrantID, ending{Actor: actor, ActorType: actorType, Action: r.Action, Reason: "refresh_token_presented",
				Metadata: r.Metadata, Origin: r.Origin})
			if err == nil && !ok {
				return credential.ErrNotLive
			}
			return err
		},
		Introspect: s.introspectRefresh,
		Events:     []string{actionCreate, actionRevoke},
	}, {
		// The secret of a confidential client a host registered (SPEC §21): presented to
		// RFC 7009 or found leaked, the client can no longer authenticate, and every grant
		// it holds ends.
		Name: "oauth_registered_client_secret", Prefix: secret.Prefix(clientSecretKind), Pattern: secret.Pattern(clientSecretKind),
		Revoke: s.revokeClientSecret,
	}}
}

// revokeClientSecret retires a registered client's secret and ends its grants, audited
// as r says.
func (s *service) revokeClientSecret(ctx context.Context, token string, r credential.Revocation) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		d := secret.DigestOf(token).Bytes()
		cl, err := tx.OAuthClient.Query().Where(oauthclient.Or(oauthclient.SecretDigest(d),
			oauthclient.And(oauthclient.PreviousSecretDigest(d), oauthclient.PreviousSecretExpiresAtGT(s.clock.Now())))).Only(ctx)
		if ent.IsNotFound(err) {
			return credential.ErrNotLive
		}
		if err != nil {
			return err
		}
		// Whichever secret leaked dies: the current one, or a rotated one still in its
		// grace (SPEC §25), which would otherwise outlive the report by up to a week.
		upd := tx.OAuthClient.UpdateOne(cl).ClearPreviousSecretDigest().ClearPreviousSecretExpiresAt()
		if cl.SecretDigest != nil && secret.Equal(d, *cl.SecretDigest) {
			upd.ClearSecretDigest()
		}
		if err := upd.Exec(ctx); err != nil {
			return err
		}
		rows, err := tx.OAuthGrant.Query().Where(oauthgrant.ClientID(cl.ID), oauthgrant.RevokedAtIsNil()).All(ctx)
		if err != nil {
			return err
		}
		for _, g := range rows {
			actor, actorType := r.By(audit.ActorClient, cl.ID)
			if _, err := s.grants.end(ctx, tx, g, ending{Actor: actor, ActorType: actorType, Action: r.Action, Reason: "client_secret_presented",
				Metadata: r.Metadata, Origin: r.Origin}); err != nil {
				return err
			}
		}
		return nil
	})
}

// introspectRefresh answers for a grant refresh token of project: active while it is the
// current one of a live grant and within its lifetimes.
func (s *service) introspectRefresh(ctx context.Context, token, project string) (map[string]any, error) {
	row, err := s.ent.GrantRefreshToken.Query().Where(grantrefreshtoken.Digest(secret.DigestOf(token).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if row.RotatedAt != nil || !now.Before(row.ExpiresAt) {
		return nil, nil
	}
	gr, err := s.ent.OAuthGrant.Get(ctx, row.GrantID)
	if ent.IsNotFound(err) || (err == nil && (gr.RevokedAt != nil || gr.ProjectID != project)) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"sub": gr.UserID, "client_id": row.ClientID, "scope": joinScopes(row.Scopes), "grant_id": gr.ID,
		"exp": row.ExpiresAt.Unix(), "iat": row.CreatedAt.Unix(), "token_type": "refresh_token"}, nil
}
