package ratelimit

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"github.com/authcore/authcore/platform/identity"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/secret"
)

// Device cookies (OWASP's scheme, SPEC §9a, §9b): a completed sign-in — the password and,
// for a user with one, the second factor — leaves in the browser a cookie naming the
// account, a random nonce and a MAC over both. A later attempt of that account presenting
// it spends the device's own budget of failures instead of the account's, at the password
// step and at the second factor alike, so an attacker failing passwords or codes from
// elsewhere — who empties the account's budget — cannot keep the owner out, and a stolen
// cookie still meets a budget of its own. The cookie is issued only once every factor
// checked out: a password alone must not buy its holder fresh budgets for guessing codes.
const (
	deviceCookie    = "acDevice"
	deviceCookieAge = 180 * 24 * time.Hour
	// devicePath covers the sign-in, its second step and step-up.
	devicePath    = "/v1/auth-core"
	devicePurpose = "device-cookie"
)

// Devices checks and issues device cookies. The account and MFA modules share it, so the
// password and the second factor spend one device budget.
type Devices struct {
	keys     *secret.Keyring
	insecure bool // AUTHCORE_INSECURE_COOKIES
}

func newDevices(keys *secret.Keyring, cfg config.Config) *Devices {
	return &Devices{keys: keys, insecure: cfg.InsecureCookies}
}

// Account is the key of an account's budget: its tenant and lower-cased email, whether
// or not the account exists.
func Account(tenantID, email string) string {
	return tenantID + "\x00" + identity.FoldEmail(email)
}

// MailedCodes is the key of the budget that wrong mailed codes (email sign-in's) spend,
// apart from budget's (an account's or a device's, as Budget gives it): a code is no
// password, so failing codes locks neither the password nor a device's password attempts.
func MailedCodes(budget string) string {
	return "mailed-code\x00" + budget
}

func (d *Devices) mac(account, nonce string) string {
	return d.keys.MAC(devicePurpose, []byte(account+"\x00"+nonce))
}

// Budget is the key an attempt for account spends: the device's when the request presents
// a device cookie this server issued for account, else the account's.
func (d *Devices) Budget(c *fiber.Ctx, account string) string {
	if nonce := d.trusted(c, account); nonce != "" {
		return "device\x00" + nonce + "\x00" + account
	}
	return account
}

// trusted returns the nonce of a device cookie of the request issued for account, or "".
// Every acDevice cookie is looked at: a browser may hold one per path (older servers set
// it on /v1/auth-core/signin alone).
func (d *Devices) trusted(c *fiber.Ctx, account string) string {
	found := ""
	c.Request().Header.VisitAllCookie(func(key, value []byte) {
		if found != "" || string(key) != deviceCookie {
			return
		}
		nonce, mac, ok := strings.Cut(string(value), ".")
		if ok && nonce != "" && len(nonce) <= 64 && hmac.Equal([]byte(mac), []byte(d.mac(account, nonce))) {
			found = nonce
		}
	})
	return found
}

// Issue sets a device cookie for account (a fresh nonce on every completed sign-in).
func (d *Devices) Issue(c *fiber.Ctx, account string, now time.Time) error {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	nonce := base64.RawURLEncoding.EncodeToString(b)
	c.Cookie(&fiber.Cookie{
		Name: deviceCookie, Value: nonce + "." + d.mac(account, nonce), Path: devicePath,
		Expires: now.Add(deviceCookieAge), HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: !d.insecure,
	})
	return nil
}
