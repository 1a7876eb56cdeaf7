package authorize

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

// Single sign-on for a project's people (SPEC §25): a tenant user who signed in at the
// console for one app of the project is signed in to every other app of it in that
// browser, until the session ends.

// ssoCookiePrefix names a project's SSO cookie: ac_sso_<projectId>.
const ssoCookiePrefix = "ac_sso_"

// ssoPurpose keys the cookie's MAC: the cookie is the session handle and a MAC over the
// project and the handle, so that a handle read from an id_token's sid (which apps see)
// cannot be made into a cookie, and one project's cookie is no use at another's.
const ssoPurpose = "sso_cookie"

func ssoCookieName(project string) string { return ssoCookiePrefix + project }

func (h ssoCookies) ssoMAC(project, handle string) string {
	return h.keys.MAC(ssoPurpose, []byte(project+"\x00"+handle))
}

// setSSO names session handle as the browser's SSO session of project: HttpOnly, Lax
// (the authorization endpoint is reached by top-level navigation), as long as a session's
// refresh token lives.
func (h ssoCookies) setSSO(c *fiber.Ctx, project, handle string) {
	c.Cookie(&fiber.Cookie{Name: ssoCookieName(project), Value: handle + "." + h.ssoMAC(project, handle), Path: "/",
		Expires: h.clock.Now().Add(h.cfg.RefreshTTL), HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: !h.cfg.InsecureCookies})
}

// clearSSO expires the project's SSO cookie.
func (h ssoCookies) clearSSO(c *fiber.Ctx, project string) {
	c.Cookie(&fiber.Cookie{Name: ssoCookieName(project), Value: "", Path: "/", Expires: time.Unix(0, 0), MaxAge: -1,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: !h.cfg.InsecureCookies})
}

// ssoHandle is the session handle the browser's SSO cookie of project names, when its
// MAC holds; "" otherwise.
func (h ssoCookies) ssoHandle(c *fiber.Ctx, project string) string {
	v := c.Cookies(ssoCookieName(project))
	handle, mac, ok := strings.Cut(v, ".")
	if !ok || handle == "" || !secret.Equal([]byte(mac), []byte(h.ssoMAC(project, handle))) {
		return ""
	}
	return strings.Clone(handle)
}

// ssoSession is the browser's live SSO session of project: its handle and state. ok is
// false when the browser has none, it ended (a sign-out, an admin's revoke, a blocked or
// deleted user: each revokes the session), or it is another tenant's.
func (h ssoCookies) ssoSession(c *fiber.Ctx, project string) (string, identity.SessionState, bool, error) {
	handle := h.ssoHandle(c, project)
	if handle == "" {
		return "", identity.SessionState{}, false, nil
	}
	st, ok, err := h.sessions.State(c.UserContext(), handle)
	if err != nil || !ok || !st.Live || st.TenantID != project {
		return "", identity.SessionState{}, false, err
	}
	return handle, st, true, nil
}

// hasMFA reports whether methods hold a second factor.
func hasMFA(amr []string) bool { return acrOf(amr) == acrMFA }

// readACR reads acr_values: whether the request asks for a second factor. Values this
// server does not know are ignored, as OIDC Core §3.1.2.1 allows for a voluntary claim.
func readACR(raw string) bool {
	return slices.Contains(strings.Fields(raw), acrMFA)
}

// customClaims are an app's claims (SPEC §25) read from the user's metadata: each name
// maps to "metadata.<path>" (dots descend into objects); strings, numbers, booleans and
// lists of them are taken, anything else (an object, a missing path) is left out. A name
// the id_token or userinfo holds already is never overridden.
func customClaims(mapping map[string]string, metadata map[string]any, into map[string]any) {
	for name, path := range mapping {
		if _, taken := into[name]; taken || registeredClaim(name) {
			continue
		}
		rest, ok := strings.CutPrefix(path, "metadata.")
		if !ok || rest == "" {
			continue
		}
		var v any = metadata
		for _, part := range strings.Split(rest, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[part]
		}
		if scalarOrList(v) {
			into[name] = v
		}
	}
}

func registeredClaim(name string) bool { return slices.Contains(registeredClaims, name) }

func scalarOrList(v any) bool {
	switch x := v.(type) {
	case string, float64, bool, int, int64:
		return true
	case []any:
		for _, e := range x {
			switch e.(type) {
			case string, float64, bool, int, int64:
			default:
				return false
			}
		}
		return true
	}
	return false
}

// appClaims adds client's custom claims of userID to claims.
func (s *service) appClaims(ctx context.Context, clientID, userID string, claims map[string]any) error {
	cl, err := s.clients.resolve(ctx, clientID)
	if err != nil {
		return nil // a client that no longer resolves has no claims to add
	}
	if !cl.app() || len(cl.Claims) == 0 {
		return nil
	}
	p, err := s.users.Profile(ctx, userID)
	if err != nil {
		return err
	}
	customClaims(cl.Claims, p.Metadata, claims)
	return nil
}
