package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/authcore/authcore/modules/federation"
	"github.com/authcore/authcore/platform/config"
)

// providersCmd manages the dashboard tenant's sign-in providers and methods (SPEC §20):
// the operator's, as a project's admins manage theirs through the API. Every rule of the
// API applies; a provider of AUTHCORE_PROVIDERS_FILE is changed only in the file.
type providersCmd struct {
	List    providersListCmd    `cmd:"" help:"List the dashboard tenant's providers (the file's too) and its methods."`
	Add     providersAddCmd     `cmd:"" help:"Add a provider to the dashboard tenant; the client secret is read from standard input when --client-secret is absent."`
	Update  providersUpdateCmd  `cmd:"" help:"Change a provider of the dashboard tenant (only the flags given)."`
	Remove  providersRemoveCmd  `cmd:"" help:"Remove a provider of the dashboard tenant, with its linked identities."`
	Methods providersMethodsCmd `cmd:"" help:"Set the dashboard tenant's methods: password and email link."`
}

type providerFlags struct {
	Type                  string   `help:"oidc or oauth2 (a preset sets it)."`
	Preset                string   `help:"google, microsoft, github, gitlab or apple."`
	Name                  string   `help:"Name on the sign-in button."`
	Issuer                string   `help:"OIDC issuer URL (discovery at <issuer>/.well-known/openid-configuration)."`
	AuthorizationEndpoint string   `help:"oauth2: authorization endpoint."`
	TokenEndpoint         string   `help:"oauth2: token endpoint."`
	UserinfoEndpoint      string   `help:"oauth2: userinfo endpoint."`
	ClientID              string   `name:"client-id" help:"Client id registered with the upstream."`
	ClientSecret          *string  `name:"client-secret" help:"Client secret; when absent on add it is read from standard input, so it need not be in argv."`
	Scopes                []string `help:"Scopes, comma-separated."`
	TrustEmail            *bool    `name:"trust-email" negatable:"" help:"The upstream vouches for the addresses it calls verified."`
	Claims                []string `help:"Claim mapping, key=claim (subject, email, emailVerified, name), comma-separated."`
	SSORequired           *bool    `name:"sso-required" negatable:"" help:"Refuse password sign-in for the provider's proven domains."`
	Enabled               *bool    `negatable:"" help:"Offer the provider on sign-in pages."`
}

// body is the flags as the admin API's JSON body: only what was given.
func (f providerFlags) body() (map[string]any, error) {
	b := map[string]any{}
	for k, v := range map[string]string{"type": f.Type, "preset": f.Preset, "name": f.Name, "issuer": f.Issuer,
		"authorizationEndpoint": f.AuthorizationEndpoint, "tokenEndpoint": f.TokenEndpoint, "userinfoEndpoint": f.UserinfoEndpoint, "clientId": f.ClientID} {
		if v != "" {
			b[k] = v
		}
	}
	if f.ClientSecret != nil {
		b["clientSecret"] = *f.ClientSecret
	}
	if f.Scopes != nil {
		b["scopes"] = f.Scopes
	}
	for k, v := range map[string]*bool{"trustEmail": f.TrustEmail, "ssoRequired": f.SSORequired, "enabled": f.Enabled} {
		if v != nil {
			b[k] = *v
		}
	}
	if len(f.Claims) > 0 {
		m := map[string]string{}
		for _, kv := range f.Claims {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("--claims: %q is not key=claim", kv)
			}
			m[k] = v
		}
		b["claims"] = m
	}
	return b, nil
}

type providersAddCmd struct{ providerFlags }

func (p providersAddCmd) Run(cfg *config.Config, stdout io.Writer) error {
	if p.ClientSecret == nil {
		s, err := readPassword(stdin)
		if err != nil {
			return fmt.Errorf("reading the client secret from standard input: %w", err)
		}
		p.ClientSecret = &s
	}
	body, err := p.body()
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(body)
	return withApp(cfg, func(ctx context.Context, o *federation.Operator) error {
		v, err := o.Create(ctx, raw)
		if err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "added provider %s (%s); register this redirect URI with it: %s\n", v.ID, v.Name, v.CallbackURL)
		return nil
	})
}

type providersUpdateCmd struct {
	ID string `arg:"" help:"Provider id (idp_…)."`
	providerFlags
}

func (p providersUpdateCmd) Run(cfg *config.Config, stdout io.Writer) error {
	body, err := p.body()
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(body)
	return withApp(cfg, func(ctx context.Context, o *federation.Operator) error {
		v, err := o.Update(ctx, p.ID, raw)
		if err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "updated provider %s (%s)\n", v.ID, v.Name)
		return nil
	})
}

type providersRemoveCmd struct {
	ID string `arg:"" help:"Provider id (idp_…)."`
}

func (p providersRemoveCmd) Run(cfg *config.Config, stdout io.Writer) error {
	return withApp(cfg, func(ctx context.Context, o *federation.Operator) error {
		if err := o.Delete(ctx, p.ID); err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "removed provider %s\n", p.ID)
		return nil
	})
}

type providersListCmd struct{}

func (providersListCmd) Run(cfg *config.Config, stdout io.Writer) error {
	return withApp(cfg, func(ctx context.Context, o *federation.Operator) error {
		m, err := o.Methods(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "methods: password=%t emailLink=%t autoLink=%t\n", m.Password, m.EmailLink, m.AutoLink)
		vs, err := o.List(ctx)
		if err != nil {
			return err
		}
		for _, v := range vs {
			where := ""
			if v.Issuer != nil {
				where = *v.Issuer
			} else if v.AuthorizationEndpoint != nil {
				where = *v.AuthorizationEndpoint
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\tenabled=%t\tmanagedBy=%s\tcallback=%s\n", v.ID, v.Type, v.Name, where, v.Enabled, v.ManagedBy, v.CallbackURL)
		}
		return nil
	})
}

type providersMethodsCmd struct {
	Password  bool  `required:"" negatable:"" help:"Password sign-in and sign-up."`
	EmailLink bool  `name:"email-link" required:"" negatable:"" help:"Sign-in by a mailed link or code."`
	AutoLink  *bool `name:"auto-link" negatable:"" help:"Link a new upstream subject to an account by an address both sides proved."`
}

func (p providersMethodsCmd) Run(cfg *config.Config, stdout io.Writer) error {
	body := map[string]any{"password": p.Password, "emailLink": p.EmailLink}
	if p.AutoLink != nil {
		body["autoLink"] = *p.AutoLink
	}
	raw, _ := json.Marshal(body)
	return withApp(cfg, func(ctx context.Context, o *federation.Operator) error {
		m, err := o.SetMethods(ctx, raw)
		if err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "methods: password=%t emailLink=%t autoLink=%t\n", m.Password, m.EmailLink, m.AutoLink)
		return nil
	})
}
