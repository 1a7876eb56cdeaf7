package account

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/secret"
)

// Device cookies (OWASP's scheme, SPEC §9a): a successful sign-in leaves in the browser a
// cookie naming the account, a random nonce and a MAC over both. A later sign-in of that
// account presenting it spends the device's own budget of failures instead of the
// account's, so an attacker guessing passwords from elsewhere — who empties the account's
// budget — cannot keep the owner out, and a stolen cookie still meets a budget of its own.
const (
	deviceCookie    = "acDevice"
	deviceCookieAge = 180 * 24 * time.Hour
	devicePurpose   = "device-cookie"
)

type devices struct {
	keys     *secret.Keyring
	insecure bool // AUTHCORE_INSECURE_COOKIES
}

func (d devices) mac(account, nonce string) string {
	return d.keys.MAC(devicePurpose, []byte(account+"\x00"+nonce))
}

// trusted returns the nonce of the request's device cookie when the cookie was issued for
// account by this server, and "" otherwise.
func (d devices) trusted(c *fiber.Ctx, account string) string {
	nonce, mac, ok := strings.Cut(c.Cookies(deviceCookie), ".")
	if !ok || nonce == "" || len(nonce) > 64 {
		return ""
	}
	if !hmac.Equal([]byte(mac), []byte(d.mac(account, nonce))) {
		return ""
	}
	return strings.Clone(nonce)
}

// issue sets a device cookie for account (a fresh nonce on every successful sign-in).
func (d devices) issue(c *fiber.Ctx, account string, now time.Time) error {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	nonce := base64.RawURLEncoding.EncodeToString(b)
	c.Cookie(&fiber.Cookie{
		Name: deviceCookie, Value: nonce + "." + d.mac(account, nonce), Path: "/v1/auth-core/signin",
		Expires: now.Add(deviceCookieAge), HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: !d.insecure,
	})
	return nil
}
