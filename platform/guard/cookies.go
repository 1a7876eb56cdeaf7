package guard

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/identity"
)

// RefreshCookie carries the refresh token; its path limits it to the refresh route, so it
// is not sent with every request.
const (
	RefreshCookie     = "sRefreshToken"
	RefreshCookiePath = "/v1/auth-core/session/refresh"
)

// SetSessionCookies writes both tokens as HttpOnly cookies (SPEC §3); only the access
// token's when t has no refresh token (a step-up keeps the session's).
func SetSessionCookies(c *fiber.Ctx, cfg config.Config, t identity.Tokens, now time.Time) {
	c.Cookie(&fiber.Cookie{
		Name: AccessCookie, Value: t.AccessToken, Path: "/",
		Expires: t.AccessTokenExpiresAt, HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: !cfg.InsecureCookies,
	})
	if t.RefreshToken == "" {
		return
	}
	c.Cookie(&fiber.Cookie{
		Name: RefreshCookie, Value: t.RefreshToken, Path: RefreshCookiePath,
		Expires: now.Add(cfg.RefreshTTL), HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: !cfg.InsecureCookies,
	})
}

// ClearSessionCookies expires both cookies.
func ClearSessionCookies(c *fiber.Ctx, cfg config.Config) {
	for _, ck := range []struct{ name, path string }{{AccessCookie, "/"}, {RefreshCookie, RefreshCookiePath}} {
		c.Cookie(&fiber.Cookie{
			Name: ck.name, Value: "", Path: ck.path, Expires: time.Unix(0, 0), MaxAge: -1,
			HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: !cfg.InsecureCookies,
		})
	}
}
