package federation

import "strings"

// preset fills a provider's endpoints and defaults for a well-known upstream (SPEC §20),
// as Kratos keeps one file per upstream over one shared configuration: adding one is a
// row here. A generic OpenID provider needs no preset, only its issuer.
type preset struct {
	Type   string // "oidc" or "oauth2"
	Issuer string // oidc; "{tenant}" is replaced by the provider's tenant (Microsoft)
	// Endpoints of an oauth2 upstream.
	AuthorizationEndpoint, TokenEndpoint, UserinfoEndpoint string
	Scopes                                                 []string
	Claims                                                 claimMap
	// TrustEmail is the default: whether the upstream only calls an address verified
	// when its owner proved it. Microsoft's email claim is not (nOAuth), GitHub's /user
	// reports no verification: both off.
	TrustEmail bool
	// multiIssuer: the id_token's iss names the signing directory (Microsoft's common
	// and organizations endpoints), checked against Issuer with its tid.
	multiIssuer bool
}

var presets = map[string]preset{
	"google": {Type: "oidc", Issuer: "https://accounts.google.com", Scopes: []string{"openid", "email", "profile"}, TrustEmail: true},
	"microsoft": {Type: "oidc", Issuer: "https://login.microsoftonline.com/{tenant}/v2.0", Scopes: []string{"openid", "email", "profile"},
		multiIssuer: true},
	"github": {Type: "oauth2", AuthorizationEndpoint: "https://github.com/login/oauth/authorize",
		TokenEndpoint: "https://github.com/login/oauth/access_token", UserinfoEndpoint: "https://api.github.com/user",
		Scopes: []string{"read:user", "user:email"}, Claims: claimMap{Subject: "id", Email: "email", Name: "name"}},
	"gitlab": {Type: "oidc", Issuer: "https://gitlab.com", Scopes: []string{"openid", "email", "profile"}, TrustEmail: true},
	// Apple's client secret is a JWT the admin signs with their key and renews (at most
	// six months); it is given here like any secret.
	"apple": {Type: "oidc", Issuer: "https://appleid.apple.com", Scopes: []string{"openid", "email", "name"}, TrustEmail: true},
}

// microsoftIssuer is the preset's issuer for a directory: common, organizations,
// consumers or a tenant id (the default, common, accepts any).
func microsoftIssuer(directory string) string {
	if directory == "" {
		directory = "common"
	}
	return strings.Replace(presets["microsoft"].Issuer, "{tenant}", directory, 1)
}

// presetNames is every preset, for validation messages.
const presetNames = "google, microsoft, github, gitlab, apple"
