package authorize

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
)

// registeredPrefix starts the ids of clients registered here (RFC 7591).
const registeredPrefix = "dcr_"

const (
	grantAuthorizationCode = "authorization_code"
	grantRefreshToken      = "refresh_token"
)

// RFC 7591 §3.2.2 errors.
func errMetadata(why string) *apperr.Error {
	return oauth.Error(apperr.KindInvalid, "invalid_client_metadata", why)
}

func errRedirectURI(why string) *apperr.Error {
	return oauth.Error(apperr.KindInvalid, "invalid_redirect_uri", why)
}

var errRegistrationClosed = oauth.Error(apperr.KindForbidden, "access_denied",
	"client registration is closed on this server (AUTHCORE_OAUTH_REGISTRATION=closed): use a client metadata document")

// register is RFC 7591 dynamic registration of a public client (SPEC §16): no secret, its
// redirect URIs checked for its application type. Spends the sign-up budget of the
// caller's address, since it writes a row for anyone who asks.
func (h *handler) register(c *fiber.Ctx) error {
	if !h.registrationOpen() {
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
	if m, st := body.String("token_endpoint_auth_method"); st == jsonbody.WrongType || (st == jsonbody.OK && m != "none") {
		return errMetadata("only public clients register here: token_endpoint_auth_method must be none")
	}
	grants := []string{grantAuthorizationCode, grantRefreshToken}
	switch gs, st := body.Strings("grant_types"); st {
	case jsonbody.OK:
		for _, g := range gs {
			if g != grantAuthorizationCode && g != grantRefreshToken {
				return errMetadata("grant_types may hold authorization_code and refresh_token only")
			}
		}
		if !slices.Contains(gs, grantAuthorizationCode) {
			return errMetadata("grant_types must include authorization_code")
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
	row, err := h.ent.OAuthClient.Create().SetName(name).SetRedirectUris(uris).SetApplicationType(appType).
		SetGrantTypes(grants).SetClientURI(clientURI).Save(c.UserContext())
	if err != nil {
		return err
	}
	out := fiber.Map{
		"client_id":                  row.ID,
		"client_id_issued_at":        row.CreatedAt.Unix(),
		"redirect_uris":              row.RedirectUris,
		"grant_types":                row.GrantTypes,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
		"application_type":           row.ApplicationType,
	}
	if name != "" {
		out["client_name"] = name
	}
	if clientURI != "" {
		out["client_uri"] = clientURI
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

func (h *handler) registrationOpen() bool { return h.cfg.OAuthRegistration != "closed" }
