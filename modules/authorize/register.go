package authorize

import (
	"cmp"
	"encoding/json"
	"github.com/authcore/authcore/ent/schema"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
)

// registeredPrefix starts the ids of clients registered here (RFC 7591).
const registeredPrefix = schema.OAuthClientIDPrefix

const (
	grantAuthorizationCode = "authorization_code"
	grantRefreshToken      = "refresh_token"
)

// registrableGrants are the grant types a registered client may name (SPEC §29): every
// one the token endpoint would serve a host's client — token exchange (RFC 8693), a JWT
// bearer assertion such as an ID-JAG (RFC 7523, SPEC §22), CIBA (SPEC §23) and the device
// grant (RFC 8628, served by a later release; the value is accepted now so that a client
// registers once). client_credentials is an auth badge's alone, and implicit and password
// are not OAuth 2.1.
var registrableGrants = []string{grantAuthorizationCode, grantRefreshToken, oauth.GrantTokenExchange,
	"urn:ietf:params:oauth:grant-type:jwt-bearer", oauth.GrantCIBA, "urn:ietf:params:oauth:grant-type:device_code"}

// RFC 7591 §3.2.2 errors.
func errMetadata(why string) *apperr.Error {
	return oauth.Error(apperr.KindInvalid, "invalid_client_metadata", why)
}

func errRedirectURI(why string) *apperr.Error {
	return oauth.Error(apperr.KindInvalid, "invalid_redirect_uri", why)
}

var errRegistrationClosed = oauth.Error(apperr.KindForbidden, "access_denied",
	"client registration is closed on this server (AUTHCORE_OAUTH_REGISTRATION=closed): use a client metadata document")

// register is RFC 7591 dynamic registration (SPEC §16, §21): a public client, or a
// confidential one with a secret (returned once) or keys (private_key_jwt), its redirect
// URIs checked for its application type. Spends the sign-up budget of the caller's
// address, since it writes a row for anyone who asks.
//
// With an initial access token (RFC 7591 §3, SPEC §25) the client is a third-party app of
// the token's project, registered even when open registration is closed.
func (h *handler) register(c *fiber.Ctx) error {
	initial, err := (appAdmin{h}).initialAccess(c)
	if err != nil {
		return err
	}
	if !h.registrationOpen() && initial == "" {
		return errRegistrationClosed
	}
	if err := h.limits.Attempts.Take(httpserver.ClientIP(c)); err != nil {
		return err
	}
	body, ok := jsonbody.Parse(c.Body())
	if !ok {
		return errMetadata("the body must be a JSON object of client metadata (RFC 7591 §2)")
	}
	uris, st := body.Strings("redirect_uris")
	if st != jsonbody.OK {
		return errRedirectURI("redirect_uris must be an array of URIs")
	}
	appType, st := body.String("application_type")
	switch {
	case st == jsonbody.Absent || st == jsonbody.Null:
		appType = inferType(uris)
	case st != jsonbody.OK || (appType != "web" && appType != "native"):
		return errMetadata("application_type must be web or native")
	}
	if why := checkRedirectURIs(uris, appType); why != "" {
		return errRedirectURI("redirect_uris " + why)
	}
	method, st := body.String("token_endpoint_auth_method")
	switch {
	case st == jsonbody.Absent || st == jsonbody.Null:
		method = authNone
	case st != jsonbody.OK || !slices.Contains([]string{authNone, authSecretBasic, authSecretPost, authPrivateKeyJWT}, method):
		return errMetadata("token_endpoint_auth_method must be none, client_secret_basic, client_secret_post or private_key_jwt")
	}
	var jwks map[string]any
	if raw, st := body.RawObject("jwks"); st == jsonbody.WrongType {
		return errMetadata("jwks must be a JSON Web Key Set object")
	} else if st == jsonbody.OK {
		if err := json.Unmarshal(raw, &jwks); err != nil {
			return errMetadata("jwks must be a JSON Web Key Set object")
		}
	}
	jwksURI, st := body.String("jwks_uri")
	if st == jsonbody.WrongType {
		return errMetadata("jwks_uri must be a string")
	}
	if why := checkKeys(method, jwks, jwksURI); why != "" {
		return errMetadata(why)
	}
	postLogout, st := body.Strings("post_logout_redirect_uris")
	if st == jsonbody.WrongType {
		return errMetadata("post_logout_redirect_uris must be an array of URIs")
	}
	if why := checkPostLogout(postLogout); why != "" {
		return errMetadata("post_logout_redirect_uris " + why)
	}
	requested, st := body.String("scope")
	if st == jsonbody.WrongType {
		return errMetadata("scope must be a string")
	}
	if why := checkScope(requested); why != "" {
		return errMetadata(why)
	}
	dpopBound, st := body.Bool("dpop_bound_access_tokens")
	if st == jsonbody.WrongType {
		return errMetadata("dpop_bound_access_tokens must be a boolean")
	}
	idTokenAlg, st := body.String("id_token_signed_response_alg")
	if st == jsonbody.WrongType || (st == jsonbody.OK && !slices.Contains(oauth.IDTokenAlgorithms, idTokenAlg)) {
		return errMetadata("id_token_signed_response_alg must be RS256 or EdDSA")
	}
	grants := []string{grantAuthorizationCode, grantRefreshToken}
	switch gs, st := body.Strings("grant_types"); st {
	case jsonbody.OK:
		for _, g := range gs {
			if !slices.Contains(registrableGrants, g) {
				return errMetadata("grant_types may hold " + strings.Join(registrableGrants, ", ") + ": " + g + " is none of them")
			}
		}
		if !slices.ContainsFunc(gs, func(g string) bool { return g != grantRefreshToken }) {
			return errMetadata("grant_types must include a grant that issues a first token (authorization_code, for one)")
		}
		grants = gs
	case jsonbody.WrongType:
		return errMetadata("grant_types must be an array of strings")
	}
	if rs, st := body.Strings("response_types"); st == jsonbody.WrongType || (st == jsonbody.OK && slices.ContainsFunc(rs, func(r string) bool { return r != "code" })) {
		return errMetadata("response_types may hold code only")
	}
	name, st := body.String("client_name")
	if st == jsonbody.WrongType {
		return errMetadata("client_name must be a string")
	}
	if _, ok := clientName(name); !ok {
		return errMetadata("client_name must be at most 200 characters, without control characters")
	}
	clientURI, st := body.String("client_uri")
	if st == jsonbody.WrongType || (clientURI != "" && checkRedirectURIs([]string{clientURI}, "web") != "") {
		return errMetadata("client_uri must be an https URL")
	}
	// A secret is shown once, in this answer; only its digest is kept (SPEC §21).
	clientSecret, digest, err := newClientSecret(method)
	if err != nil {
		return err
	}
	var row *ent.OAuthClient
	err = database.WithTx(c.UserContext(), h.ent, func(tx *ent.Tx) error {
		create := tx.OAuthClient.Create().SetName(name).SetRedirectUris(uris).SetApplicationType(appType).
			SetGrantTypes(grants).SetClientURI(clientURI).SetTokenEndpointAuthMethod(method).SetJwksURI(jwksURI).
			SetPostLogoutRedirectUris(postLogout).SetScope(requested).SetIDTokenSignedResponseAlg(idTokenAlg).SetDpopBoundAccessTokens(dpopBound)
		if jwks != nil {
			create.SetJwks(jwks)
		}
		if digest != nil {
			create.SetSecretDigest(digest)
		}
		tokenID := ""
		if initial != "" { // a use is spent only by a registration that commits
			project, id, err := (appAdmin{h}).spendInitialAccess(c.UserContext(), tx, initial)
			if err != nil {
				return err
			}
			tokenID = id
			create.SetProjectID(project).SetFirstParty(false).SetAppType(dcrAppType(appType, method))
		}
		var err error
		if row, err = create.Save(c.UserContext()); err != nil || initial == "" {
			return err
		}
		_, err = h.grants.audit.Record(c.UserContext(), tx, audit.Event{ProjectID: row.ProjectID, Action: actionAppCreate, Origin: httpserver.Origin(c),
			Metadata: map[string]any{"clientId": row.ID, "name": name, "type": row.AppType, "firstParty": false, "registrationTokenId": tokenID}})
		return err
	})
	if err != nil {
		return err
	}
	out := fiber.Map{
		"client_id":                  row.ID,
		"client_id_issued_at":        row.CreatedAt.Unix(),
		"redirect_uris":              row.RedirectUris,
		"grant_types":                row.GrantTypes,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           row.ApplicationType,
		// What it may ask for (RFC 7591 §3.2.1): what it registered, else the scopes
		// metadata lists (a resource's own scopes are the resource's to publish).
		"scope": cmp.Or(requested, strings.Join(identityScopes, " ")),
	}
	for k, v := range map[string]string{"client_name": name, "client_uri": clientURI, "jwks_uri": jwksURI,
		"id_token_signed_response_alg": idTokenAlg, "client_secret": clientSecret} {
		if v != "" {
			out[k] = v
		}
	}
	if clientSecret != "" {
		out["client_secret_expires_at"] = 0 // it does not expire; a leak report or RFC 7009 ends it
	}
	if jwks != nil {
		out["jwks"] = jwks
	}
	if dpopBound {
		out["dpop_bound_access_tokens"] = true
	}
	if len(postLogout) > 0 {
		out["post_logout_redirect_uris"] = postLogout
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(out)
}

// inferType is the application type of redirect URIs given none: web when one is https
// off loopback (RFC 7591's default, then checked as such), else native.
func inferType(uris []string) string {
	for _, raw := range uris {
		if u, err := url.Parse(raw); err == nil && strings.EqualFold(u.Scheme, "https") && !loopbackHost(u.Hostname()) {
			return "web"
		}
	}
	return "native"
}

// dcrAppType is the app type of a client registered with an initial access token: a
// confidential web client is a web app, a public one an SPA; native stays native.
func dcrAppType(applicationType, method string) string {
	switch {
	case applicationType == "native":
		return appNative
	case method == authNone:
		return appSPA
	}
	return appWeb
}

func (h *handler) registrationOpen() bool { return h.cfg.OAuthRegistration != "closed" }
