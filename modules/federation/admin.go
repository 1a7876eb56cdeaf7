package federation

import (
	"context"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/outbound"
)

// ProviderView is a provider as its admins see it: never its secret.
type ProviderView struct {
	ID                    string            `json:"id"`
	Type                  string            `json:"type"`
	Preset                string            `json:"preset"`
	Name                  string            `json:"name"`
	Issuer                *string           `json:"issuer"`
	AuthorizationEndpoint *string           `json:"authorizationEndpoint"`
	TokenEndpoint         *string           `json:"tokenEndpoint"`
	UserinfoEndpoint      *string           `json:"userinfoEndpoint"`
	ClientID              string            `json:"clientId"`
	Scopes                []string          `json:"scopes"`
	TrustEmail            bool              `json:"trustEmail"`
	Claims                map[string]string `json:"claims"`
	SSORequired           bool              `json:"ssoRequired"`
	Offline               bool              `json:"offline"`
	Enabled               bool              `json:"enabled"`
	Domains               []Domain          `json:"domains"`
	// OrgID is the org whose connection it is (SPEC §26), null for the tenant's own.
	OrgID       *string `json:"orgId"`
	CallbackURL string  `json:"callbackUrl"`
	// ManagedBy: "admin" (API), "operator" (CLI) or "file" (AUTHCORE_PROVIDERS_FILE).
	ManagedBy string    `json:"managedBy"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// providerAdmin is a tenant's sign-in configuration as its admins (and the operator)
// change it: providers and methods, each change audited.
type providerAdmin struct {
	ent    *ent.Client
	store  *store
	policy outbound.Policy
	audit  *audit.Recorder
	self   string
}

func (a providerAdmin) viewOf(p Provider, domains []*ent.ProviderDomain) ProviderView {
	v := ProviderView{ID: p.ID, Type: p.Type, Preset: p.Preset, Name: p.Name, Issuer: orNil(p.Issuer),
		AuthorizationEndpoint: orNil(p.AuthorizationEndpoint), TokenEndpoint: orNil(p.TokenEndpoint), UserinfoEndpoint: orNil(p.UserinfoEndpoint),
		ClientID: p.ClientID, Scopes: p.Scopes, TrustEmail: p.TrustEmail, Claims: p.Claims.asMap(), SSORequired: p.SSORequired,
		Offline: p.Offline, Enabled: p.Enabled, Domains: []Domain{}, CallbackURL: callbackURL(a.self, p.ID), ManagedBy: "admin", OrgID: orNil(p.OrgID),
		CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	switch {
	case p.fromFile:
		v.ManagedBy = "file"
	case p.TenantID == "public":
		v.ManagedBy = "operator"
	}
	for _, d := range domains {
		v.Domains = append(v.Domains, domainView(d))
	}
	return v
}

// views lists a tenant's providers with their domains.
func (a providerAdmin) views(ctx context.Context, tenant string) ([]ProviderView, error) {
	ps, err := a.store.list(ctx, tenant)
	if err != nil {
		return nil, err
	}
	ds, err := a.store.domains(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]ProviderView, 0, len(ps))
	for _, p := range ps {
		out = append(out, a.viewOf(p, ds[p.ID]))
	}
	return out, nil
}

func (a providerAdmin) viewOne(ctx context.Context, p Provider) (ProviderView, error) {
	ds, err := a.store.domains(ctx, p.TenantID)
	if err != nil {
		return ProviderView{}, err
	}
	return a.viewOf(p, ds[p.ID]), nil
}

// Admin actions on a tenant's sign-in configuration, audited with the change.
const (
	actionMethods        = "auth.methods_update"
	actionProviderCreate = "auth.provider_create"
	actionProviderUpdate = "auth.provider_update"
	actionProviderDelete = "auth.provider_delete"
)

// Change is who changes a tenant's configuration: an admin (audited as actor) or the
// operator (no actor).
type Change struct {
	Actor  *string
	Origin audit.Origin
}

func (a providerAdmin) record(ctx context.Context, tx *ent.Tx, tenant, action string, ch Change, md map[string]any) error {
	ev := audit.Event{ActorID: ch.Actor, ProjectID: tenant, Action: action, Origin: ch.Origin, Metadata: md}
	if org, ok := md["orgId"].(string); ok {
		ev.OrgID = &org // an org's connection: the event is the org's too
	}
	_, err := a.audit.Record(ctx, tx, ev)
	return err
}

// CreateProvider adds a provider to tenant from a request body (admin API, CLI alike).
func (a providerAdmin) CreateProvider(ctx context.Context, tenant string, body []byte, ch Change) (ProviderView, error) {
	return a.create(ctx, tenant, "", body, ch)
}

// create adds a provider to tenant, bound to orgID as its connection unless "".
func (a providerAdmin) create(ctx context.Context, tenant, orgID string, body []byte, ch Change) (ProviderView, error) {
	in, f := parseInput(body, true)
	p := apply(ctx, Provider{TenantID: tenant}, in, a.policy, f)
	if err := f.Err(); err != nil {
		return ProviderView{}, err
	}
	p.TenantID, p.OrgID = tenant, orgID
	err := database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
		var err error
		if p, err = a.store.create(ctx, tx, p, *in.ClientSecret); err != nil {
			return err
		}
		return a.record(ctx, tx, tenant, actionProviderCreate, ch, withOrg(p, map[string]any{"providerId": p.ID, "type": p.Type, "name": p.Name}))
	})
	if err != nil {
		return ProviderView{}, err
	}
	return a.viewOf(p, nil), nil
}

// UpdateProvider changes the fields a body names.
func (a providerAdmin) UpdateProvider(ctx context.Context, tenant, id string, body []byte, ch Change) (ProviderView, error) {
	p, err := a.store.getIn(ctx, tenant, id)
	if err != nil {
		return ProviderView{}, err
	}
	if p.fromFile {
		return ProviderView{}, errFileManaged
	}
	in, f := parseInput(body, false)
	p = apply(ctx, p, in, a.policy, f)
	if err := f.Err(); err != nil {
		return ProviderView{}, err
	}
	err = database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
		if p, err = a.store.update(ctx, tx, p, in.ClientSecret); err != nil {
			return err
		}
		return a.record(ctx, tx, tenant, actionProviderUpdate, ch, withOrg(p, map[string]any{"providerId": p.ID, "secretChanged": in.ClientSecret != nil}))
	})
	if err != nil {
		return ProviderView{}, err
	}
	return a.viewOne(ctx, p)
}

// DeleteProvider removes a provider, its identities and domains.
func (a providerAdmin) DeleteProvider(ctx context.Context, tenant, id string, ch Change) error {
	p, err := a.store.getIn(ctx, tenant, id)
	if err != nil {
		return err
	}
	if p.fromFile {
		return errFileManaged
	}
	return database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
		n, err := a.store.remove(ctx, tx, p)
		if err != nil {
			return err
		}
		return a.record(ctx, tx, tenant, actionProviderDelete, ch, withOrg(p, map[string]any{"providerId": p.ID, "identitiesRemoved": n}))
	})
}

// withOrg names an org's connection's org in its audit metadata (the event's orgId).
func withOrg(p Provider, md map[string]any) map[string]any {
	if p.OrgID != "" {
		md["orgId"] = p.OrgID
	}
	return md
}

var errFileManaged = apperr.Conflict("managed_by_file", "this provider is set in AUTHCORE_PROVIDERS_FILE: change it there")

// SetMethods sets a tenant's methods, leaving at least one way to sign in.
func (a providerAdmin) SetMethods(ctx context.Context, tenant string, body []byte, ch Change) (Methods, error) {
	f := jsonbody.Read(body)
	cur, err := a.store.methods(ctx, tenant)
	if err != nil {
		return Methods{}, err
	}
	m := cur
	for name, dst := range map[string]*bool{"password": &m.Password, "emailLink": &m.EmailLink} {
		b, st := f.Bool(name)
		if st != jsonbody.OK {
			f.Fail(name, "required boolean")
		}
		*dst = b
	}
	switch b, st := f.Bool("autoLink"); st {
	case jsonbody.OK:
		m.AutoLink = b
	case jsonbody.WrongType, jsonbody.Null:
		f.Fail("autoLink", "must be a boolean")
	}
	if err := f.Err(); err != nil {
		return Methods{}, err
	}
	if !m.Password && !m.EmailLink {
		ps, err := a.store.list(ctx, tenant)
		if err != nil {
			return Methods{}, err
		}
		if len(enabledOnly(ps)) == 0 {
			return Methods{}, errNoSignInMethod
		}
	}
	err = database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
		if err := a.store.setMethods(ctx, tx, tenant, m); err != nil {
			return err
		}
		return a.record(ctx, tx, tenant, actionMethods, ch, map[string]any{"password": m.Password, "emailLink": m.EmailLink, "autoLink": m.AutoLink})
	})
	return m, err
}
