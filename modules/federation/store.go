package federation

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/providerdomain"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/ent/signinmethods"
	"github.com/authcore/authcore/ent/signinprovider"
	"github.com/authcore/authcore/platform/apperr"
	ident "github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

// Methods are a tenant's sign-in methods (SPEC §20).
type Methods struct {
	Password  bool `json:"password"`
	EmailLink bool `json:"emailLink"`
	// AutoLink lets a new subject join an existing account by an address both sides
	// proved; off, every link is made by the signed-in person.
	AutoLink bool `json:"autoLink"`
}

var defaultMethods = Methods{Password: true, EmailLink: false, AutoLink: true}

// store keeps providers and methods: rows, and for tenant "public" the operator's file.
type store struct {
	ent    *ent.Client
	keys   *secret.Keyring
	policy outbound.Policy
	file   fileConfig
}

// fileConfig is AUTHCORE_PROVIDERS_FILE: the dashboard tenant's providers and methods, as
// the operator keeps them in configuration rather than in the store.
type fileConfig struct {
	Methods   *Methods
	Providers []Provider
}

var fileID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// loadFile reads and checks the providers file. Each entry is read by the same parser as
// the admin API (JSON and YAML alike), plus an id of the operator's choosing, stable
// across restarts since identities name it.
func loadFile(ctx context.Context, path string, policy outbound.Policy) (fileConfig, error) {
	var fc fileConfig
	if path == "" {
		return fc, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fc, fmt.Errorf("AUTHCORE_PROVIDERS_FILE: %w", err)
	}
	var doc struct {
		Methods   *Methods         `yaml:"methods"`
		Providers []map[string]any `yaml:"providers"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fc, fmt.Errorf("AUTHCORE_PROVIDERS_FILE: %w", err)
	}
	if doc.Methods != nil {
		m := *doc.Methods
		fc.Methods = &m
	}
	seen := map[string]bool{}
	for i, entry := range doc.Providers {
		id, _ := entry["id"].(string)
		if !fileID.MatchString(id) || strings.HasPrefix(id, schema.SigninProviderIDPrefix) || seen[id] {
			return fc, fmt.Errorf("AUTHCORE_PROVIDERS_FILE: providers[%d].id must be unique, 1 to 32 of a-z 0-9 _ - (not idp_…)", i)
		}
		seen[id] = true
		delete(entry, "id")
		if env, ok := entry["clientSecretEnv"].(string); ok {
			entry["clientSecret"] = os.Getenv(env)
			delete(entry, "clientSecretEnv")
		}
		body, err := jsonOf(entry)
		if err != nil {
			return fc, fmt.Errorf("AUTHCORE_PROVIDERS_FILE: providers[%d]: %w", i, err)
		}
		in, f := parseInput(body, true)
		p := apply(ctx, Provider{}, in, policy, f)
		if err := f.Err(); err != nil {
			return fc, fmt.Errorf("AUTHCORE_PROVIDERS_FILE: providers[%d] (%s): %s", i, id, issuesOf(err))
		}
		p.ID, p.TenantID, p.fromFile, p.fileText = id, ident.PublicTenant, true, *in.ClientSecret
		fc.Providers = append(fc.Providers, p)
	}
	return fc, nil
}

func issuesOf(err error) string {
	e, ok := apperr.As(err)
	if !ok {
		return err.Error()
	}
	return fmt.Sprintf("%v", e.Fields["issues"])
}

func view(r *ent.SignInProvider) Provider {
	return Provider{ID: r.ID, TenantID: r.TenantID, Type: string(r.Type), Preset: r.Preset, Name: r.Name, Issuer: r.Issuer,
		AuthorizationEndpoint: r.AuthorizationEndpoint, TokenEndpoint: r.TokenEndpoint, UserinfoEndpoint: r.UserinfoEndpoint,
		ClientID: r.ClientID, Scopes: r.Scopes, TrustEmail: r.TrustEmail, Claims: claimMapOf(r.Claims), SSORequired: r.SSORequired,
		Offline: r.Offline, Enabled: r.Enabled, OrgID: deref(r.OrgID), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, sealed: r.ClientSecretSealed}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func claimMapOf(m map[string]string) claimMap {
	return claimMap{Subject: m["subject"], Email: m["email"], EmailVerified: m["emailVerified"], Name: m["name"]}
}

func (c claimMap) asMap() map[string]string {
	m := map[string]string{}
	for k, v := range map[string]string{"subject": c.Subject, "email": c.Email, "emailVerified": c.EmailVerified, "name": c.Name} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// secretOf opens a provider's client secret, to present it to the upstream.
func (s *store) secretOf(p Provider) (string, error) {
	if p.fromFile {
		return p.fileText, nil
	}
	b, err := s.keys.Open(p.sealed, []byte(p.ID))
	return string(b), err
}

// get is a provider by id, of any tenant; disabled ones too.
func (s *store) get(ctx context.Context, id string) (Provider, error) {
	for _, p := range s.file.Providers {
		if p.ID == id {
			return p, nil
		}
	}
	if !strings.HasPrefix(id, schema.SigninProviderIDPrefix) || len(id) > 40 {
		return Provider{}, errProviderNotFound
	}
	r, err := s.ent.SignInProvider.Get(ctx, id)
	if ent.IsNotFound(err) {
		return Provider{}, errProviderNotFound
	}
	if err != nil {
		return Provider{}, err
	}
	return view(r), nil
}

// getIn is a provider of tenant; another tenant's is not found.
func (s *store) getIn(ctx context.Context, tenant, id string) (Provider, error) {
	p, err := s.get(ctx, id)
	if err == nil && p.TenantID != tenant {
		return Provider{}, errProviderNotFound
	}
	return p, err
}

// list is a tenant's providers, oldest first; the file's first for "public".
func (s *store) list(ctx context.Context, tenant string) ([]Provider, error) {
	var out []Provider
	if tenant == ident.PublicTenant {
		out = append(out, s.file.Providers...)
	}
	rows, err := s.ent.SignInProvider.Query().Where(signinprovider.TenantID(tenant)).Order(ent.Asc(signinprovider.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out = append(out, view(r))
	}
	return out, nil
}

// create stores a checked provider, its secret sealed to its id.
func (s *store) create(ctx context.Context, tx *ent.Tx, p Provider, clientSecret string) (Provider, error) {
	p.ID = schema.NewID(schema.SigninProviderIDPrefix)
	sealed, err := sealedClientSecret.Seal(s.keys, []byte(clientSecret), p.ID)
	if err != nil {
		return Provider{}, err
	}
	r, err := tx.SignInProvider.Create().SetID(p.ID).SetTenantID(p.TenantID).SetType(signinprovider.Type(p.Type)).SetPreset(p.Preset).
		SetName(p.Name).SetIssuer(p.Issuer).SetAuthorizationEndpoint(p.AuthorizationEndpoint).SetTokenEndpoint(p.TokenEndpoint).
		SetUserinfoEndpoint(p.UserinfoEndpoint).SetClientID(p.ClientID).SetClientSecretSealed(sealed).SetScopes(p.Scopes).
		SetTrustEmail(p.TrustEmail).SetClaims(p.Claims.asMap()).SetSSORequired(p.SSORequired).SetOffline(p.Offline).SetEnabled(p.Enabled).SetNillableOrgID(orNil(p.OrgID)).Save(ctx)
	if err != nil {
		return Provider{}, err
	}
	return view(r), nil
}

// orgConnection is the org's first enabled connection, oldest first, if any.
func (s *store) orgConnection(ctx context.Context, tenant, orgID string) (Provider, bool, error) {
	r, err := s.ent.SignInProvider.Query().Where(signinprovider.TenantID(tenant), signinprovider.OrgID(orgID), signinprovider.Enabled(true)).
		Order(ent.Asc(signinprovider.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return Provider{}, false, nil
	}
	if err != nil {
		return Provider{}, false, err
	}
	return view(r), true, nil
}

// update stores a changed provider; a new secret is sealed again.
func (s *store) update(ctx context.Context, tx *ent.Tx, p Provider, clientSecret *string) (Provider, error) {
	u := tx.SignInProvider.UpdateOneID(p.ID).SetName(p.Name).SetIssuer(p.Issuer).SetAuthorizationEndpoint(p.AuthorizationEndpoint).
		SetTokenEndpoint(p.TokenEndpoint).SetUserinfoEndpoint(p.UserinfoEndpoint).SetClientID(p.ClientID).SetScopes(p.Scopes).
		SetTrustEmail(p.TrustEmail).SetClaims(p.Claims.asMap()).SetSSORequired(p.SSORequired).SetOffline(p.Offline).SetEnabled(p.Enabled)
	if clientSecret != nil {
		sealed, err := sealedClientSecret.Seal(s.keys, []byte(*clientSecret), p.ID)
		if err != nil {
			return Provider{}, err
		}
		u = u.SetClientSecretSealed(sealed)
	}
	r, err := u.Save(ctx)
	if err != nil {
		return Provider{}, err
	}
	return view(r), nil
}

// remove deletes a provider with its identities and domains; it says how many
// identities went with it.
func (s *store) remove(ctx context.Context, tx *ent.Tx, p Provider) (int, error) {
	return removeProvider(ctx, tx, p.ID)
}

// removeProvider is remove for those that hold no store (orgConnections: the org module
// depends on them, and the store's service depends on the org module).
func removeProvider(ctx context.Context, tx *ent.Tx, id string) (int, error) {
	n, err := tx.Identity.Delete().Where(identity.ProviderID(id)).Exec(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := tx.ProviderDomain.Delete().Where(providerdomain.ProviderID(id)).Exec(ctx); err != nil {
		return 0, err
	}
	return n, tx.SignInProvider.DeleteOneID(id).Exec(ctx)
}

// methods is a tenant's methods: the file's for "public" when it names them, else the
// row, else the defaults.
func (s *store) methods(ctx context.Context, tenant string) (Methods, error) {
	if tenant == ident.PublicTenant && s.file.Methods != nil {
		return *s.file.Methods, nil
	}
	r, err := s.ent.SignInMethods.Get(ctx, tenant)
	if ent.IsNotFound(err) {
		return defaultMethods, nil
	}
	if err != nil {
		return Methods{}, err
	}
	return Methods{Password: r.Password, EmailLink: r.EmailLink, AutoLink: r.AutoLink}, nil
}

func (s *store) setMethods(ctx context.Context, tx *ent.Tx, tenant string, m Methods) error {
	return tx.SignInMethods.Create().SetID(tenant).SetPassword(m.Password).SetEmailLink(m.EmailLink).SetAutoLink(m.AutoLink).
		OnConflictColumns(signinmethods.FieldID).UpdateNewValues().Exec(ctx)
}

// domains maps provider ids to their claimed domains.
func (s *store) domains(ctx context.Context, tenant string) (map[string][]*ent.ProviderDomain, error) {
	rows, err := s.ent.ProviderDomain.Query().Where(providerdomain.TenantID(tenant)).Order(ent.Asc(providerdomain.FieldDomain)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]*ent.ProviderDomain{}
	for _, r := range rows {
		out[r.ProviderID] = append(out[r.ProviderID], r)
	}
	return out, nil
}

func enabledOnly(ps []Provider) []Provider {
	return slices.DeleteFunc(slices.Clone(ps), func(p Provider) bool { return !p.Enabled })
}

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
