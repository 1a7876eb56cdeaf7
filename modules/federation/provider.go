package federation

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/outbound"
)

// Provider is an upstream identity provider of a tenant (SPEC §20), as configured: by a
// project's admins (a row), or for the dashboard's tenant by the operator (a row the CLI
// writes, or an entry of AUTHCORE_PROVIDERS_FILE). Its client secret is never in it: it is
// opened from its sealed form only to call the upstream.
type Provider struct {
	ID                    string
	TenantID              string
	Type                  string // "oidc" or "oauth2"
	Preset                string
	Name                  string
	Issuer                string
	AuthorizationEndpoint string
	TokenEndpoint         string
	UserinfoEndpoint      string
	ClientID              string
	Scopes                []string
	TrustEmail            bool
	Claims                claimMap
	SSORequired           bool
	Offline               bool
	Enabled               bool
	// OrgID is the org whose connection it is (SPEC §26); "" for the tenant's own.
	OrgID                string
	CreatedAt, UpdatedAt time.Time
	// sealed is the client secret, sealed with the row id as AAD; file holds a file
	// entry's secret itself (the file is the operator's to protect).
	sealed   string
	fileText string
	fromFile bool
}

// version changes whenever the configuration does: a cached upstream client is rebuilt.
func (p Provider) version() string {
	return p.ID + "\x00" + p.UpdatedAt.UTC().Format(time.RFC3339Nano)
}

// providerInput is a provider as given to create or change it: from the admin API, the
// CLI or the providers file, all read by one parser.
type providerInput struct {
	Type, Preset, Name, Issuer                             *string
	AuthorizationEndpoint, TokenEndpoint, UserinfoEndpoint *string
	ClientID, ClientSecret                                 *string
	Scopes                                                 []string
	scopesSet                                              bool
	TrustEmail, SSORequired, Offline, Enabled              *bool
	Claims                                                 *claimMap
}

var (
	scopeToken = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]{1,100}$`) // RFC 6749 §3.3
	claimName  = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,100}$`)
)

const (
	maxProviderName = 80
	maxClientID     = 512
	maxClientSecret = 4096
	maxScopes       = 20
)

// parseInput reads a provider's fields; create requires what a new provider needs.
func parseInput(body []byte, create bool) (providerInput, *jsonbody.Fields) {
	f := jsonbody.Read(body)
	var in providerInput
	str := func(name string, max int) *string {
		s, st := f.String(name)
		switch st {
		case jsonbody.OK:
			s = strings.TrimSpace(s)
			if s == "" || utf8.RuneCountInString(s) > max || strings.ContainsFunc(s, isControl) {
				f.Fail(name, "must be 1 to "+strconv.Itoa(max)+" characters without control characters")
				return nil
			}
			return &s
		case jsonbody.WrongType:
			f.Fail(name, "must be a string")
		}
		return nil
	}
	boolean := func(name string) *bool {
		b, st := f.Bool(name)
		switch st {
		case jsonbody.OK:
			return &b
		case jsonbody.WrongType:
			f.Fail(name, "must be a boolean")
		}
		return nil
	}
	in.Type, in.Preset, in.Name = str("type", 10), str("preset", 20), str("name", maxProviderName)
	in.Issuer = str("issuer", 2048)
	in.AuthorizationEndpoint, in.TokenEndpoint, in.UserinfoEndpoint = str("authorizationEndpoint", 2048), str("tokenEndpoint", 2048), str("userinfoEndpoint", 2048)
	in.ClientID, in.ClientSecret = str("clientId", maxClientID), str("clientSecret", maxClientSecret)
	in.TrustEmail, in.SSORequired, in.Offline, in.Enabled = boolean("trustEmail"), boolean("ssoRequired"), boolean("offline"), boolean("enabled")
	switch ss, st := f.Strings("scopes"); st {
	case jsonbody.OK:
		in.scopesSet = true
		if len(ss) > maxScopes {
			f.Fail("scopes", "at most 20 scopes")
		}
		for _, s := range ss {
			if !scopeToken.MatchString(s) {
				f.Fail("scopes", "each scope is 1 to 100 printable characters without spaces, quotes or backslashes")
				break
			}
		}
		in.Scopes = ss
	case jsonbody.Null:
		in.scopesSet = true
	case jsonbody.WrongType:
		f.Fail("scopes", "must be an array of strings")
	}
	switch raw, st := f.RawObject("claims"); st {
	case jsonbody.OK:
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		var cm claimMap
		for k, v := range m {
			var s string
			if json.Unmarshal(v, &s) != nil || !claimName.MatchString(s) {
				f.Fail("claims."+k, "must be a claim name (letters, digits, _ . : -)")
				continue
			}
			switch k {
			case "subject":
				cm.Subject = s
			case "email":
				cm.Email = s
			case "emailVerified":
				cm.EmailVerified = s
			case "name":
				cm.Name = s
			default:
				f.Fail("claims."+k, "unknown: claims maps subject, email, emailVerified and name")
			}
		}
		in.Claims = &cm
	case jsonbody.WrongType:
		f.Fail("claims", "must be an object")
	}
	if in.Type != nil && *in.Type != "oidc" && *in.Type != "oauth2" {
		f.Fail("type", "must be oidc or oauth2")
	}
	if in.Preset != nil {
		if _, ok := presets[*in.Preset]; !ok && *in.Preset != "generic" {
			f.Fail("preset", "must be one of "+presetNames+" (or generic)")
		}
	}
	if create && in.ClientID == nil {
		f.Fail("clientId", "required string")
	}
	if create && in.ClientSecret == nil {
		f.Fail("clientSecret", "required string")
	}
	return in, f
}

// apply merges in onto p (a new provider is the zero one) and checks the result: the
// shape its type needs, and every URL the admin gave under the outbound policy (a
// preset's are known). issues go to f.
func apply(ctx context.Context, p Provider, in providerInput, policy outbound.Policy, f *jsonbody.Fields) Provider {
	create := p.ID == ""
	if in.Preset != nil && (create || *in.Preset != p.Preset) {
		if !create {
			f.Fail("preset", "cannot be changed: add another provider")
			return p
		}
		p.Preset = *in.Preset
	}
	if p.Preset == "" {
		p.Preset = "generic"
	}
	pre, hasPreset := presets[p.Preset]
	if create {
		switch {
		case hasPreset:
			if in.Type != nil && *in.Type != pre.Type {
				f.Fail("type", "the "+p.Preset+" preset is "+pre.Type)
			}
			p.Type = pre.Type
			p.Issuer, p.AuthorizationEndpoint, p.TokenEndpoint, p.UserinfoEndpoint = pre.Issuer, pre.AuthorizationEndpoint, pre.TokenEndpoint, pre.UserinfoEndpoint
			if p.Preset == "microsoft" {
				p.Issuer = microsoftIssuer("")
			}
			p.Scopes, p.Claims, p.TrustEmail = slices.Clone(pre.Scopes), pre.Claims, pre.TrustEmail
			p.Name = strings.ToUpper(p.Preset[:1]) + p.Preset[1:]
			if p.Preset == "github" {
				p.Name = "GitHub"
			} else if p.Preset == "gitlab" {
				p.Name = "GitLab"
			}
		case in.Type == nil:
			f.Fail("type", "required: oidc or oauth2 (or a preset)")
			return p
		default:
			p.Type = *in.Type
			if p.Type == "oidc" {
				p.Scopes = []string{"openid", "email", "profile"}
			}
		}
		p.Enabled = true
	} else if in.Type != nil && *in.Type != p.Type {
		f.Fail("type", "cannot be changed: add another provider")
	}
	if in.Name != nil {
		p.Name = *in.Name
	}
	checkURL := func(field string, v *string, dst *string) {
		if v == nil {
			return
		}
		if why, ok := policy.CheckURL(ctx, *v); !ok {
			f.Fail(field, why)
			return
		}
		*dst = *v // an issuer as given: it must equal the discovery document's, slash and all
	}
	switch p.Type {
	case "oidc":
		if p.Preset == "microsoft" && in.Issuer != nil {
			// One directory instead of any: its issuer, under Microsoft's host only.
			if !strings.HasPrefix(*in.Issuer, "https://login.microsoftonline.com/") || !strings.HasSuffix(*in.Issuer, "/v2.0") {
				f.Fail("issuer", "for the microsoft preset, https://login.microsoftonline.com/<directory>/v2.0")
			} else {
				p.Issuer = *in.Issuer
			}
		} else if hasPreset && in.Issuer != nil {
			f.Fail("issuer", "is the "+p.Preset+" preset's")
		} else {
			checkURL("issuer", in.Issuer, &p.Issuer)
		}
		for _, e := range []struct {
			name string
			v    *string
		}{{"authorizationEndpoint", in.AuthorizationEndpoint}, {"tokenEndpoint", in.TokenEndpoint}, {"userinfoEndpoint", in.UserinfoEndpoint}} {
			if e.v != nil {
				f.Fail(e.name, "an oidc provider's endpoints come from its issuer's discovery document")
			}
		}
		if p.Issuer == "" && in.Issuer == nil {
			f.Fail("issuer", "required for an oidc provider")
		}
	case "oauth2":
		if in.Issuer != nil {
			f.Fail("issuer", "an oauth2 provider has no issuer: give its endpoints")
		}
		if hasPreset && (in.AuthorizationEndpoint != nil || in.TokenEndpoint != nil || in.UserinfoEndpoint != nil) {
			f.Fail("authorizationEndpoint", "the "+p.Preset+" preset's endpoints are fixed")
		} else {
			checkURL("authorizationEndpoint", in.AuthorizationEndpoint, &p.AuthorizationEndpoint)
			checkURL("tokenEndpoint", in.TokenEndpoint, &p.TokenEndpoint)
			checkURL("userinfoEndpoint", in.UserinfoEndpoint, &p.UserinfoEndpoint)
		}
		for name, v := range map[string]string{"authorizationEndpoint": p.AuthorizationEndpoint, "tokenEndpoint": p.TokenEndpoint, "userinfoEndpoint": p.UserinfoEndpoint} {
			if v == "" && !failed(f, name) {
				f.Fail(name, "required for an oauth2 provider")
			}
		}
	}
	if in.ClientID != nil {
		p.ClientID = *in.ClientID
	}
	if in.scopesSet {
		p.Scopes = slices.Clone(in.Scopes)
	}
	if p.Type == "oidc" && !slices.Contains(p.Scopes, "openid") {
		p.Scopes = append([]string{"openid"}, p.Scopes...)
	}
	if p.Scopes == nil {
		p.Scopes = []string{}
	}
	if in.Claims != nil {
		p.Claims = *in.Claims
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.TrustEmail, in.TrustEmail)
	set(&p.SSORequired, in.SSORequired)
	set(&p.Offline, in.Offline)
	set(&p.Enabled, in.Enabled)
	return p
}

// failed reports whether field already has an issue: one reason per field is enough.
func failed(f *jsonbody.Fields, field string) bool {
	err := f.Err()
	e, ok := err.(*apperr.Error)
	if !ok {
		return false
	}
	issues, _ := e.Fields["issues"].([]apperr.Issue)
	for _, i := range issues {
		if i.Field == field {
			return true
		}
	}
	return false
}
