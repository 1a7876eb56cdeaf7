package federation

import (
	"encoding/json"
	"github.com/authcore/authcore/platform/identity"
	"strconv"
	"strings"
)

// claimMap names the upstream's claims for what a sign-in needs (SPEC §20); an empty
// name takes the OpenID Connect standard one.
type claimMap struct {
	Subject       string `json:"subject"`
	Email         string `json:"email"`
	EmailVerified string `json:"emailVerified"`
	Name          string `json:"name"`
}

func (m claimMap) withDefaults() claimMap {
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	return claimMap{Subject: def(m.Subject, "sub"), Email: def(m.Email, "email"),
		EmailVerified: def(m.EmailVerified, "email_verified"), Name: def(m.Name, "name")}
}

// claims are what an upstream said of the person, normalised (Kratos' claims.Claims).
type claims struct {
	Subject string
	Email   string // lower-cased; "" when the upstream gave none
	// EmailVerified is the upstream's own word; whether it counts is the provider's
	// trustEmail (see proven).
	EmailVerified bool
	// VerifiedStated: the upstream said something about verification at all. An oauth2
	// upstream mapped without an email_verified claim says nothing.
	VerifiedStated bool
	Name           *string
}

// Limits on what an upstream may hand us, so a hostile one cannot fill the store.
const (
	maxSubject = 255
	maxName    = 200
)

// read normalises raw claims with the mapping. ok is false without a usable subject.
func read(raw map[string]any, m claimMap) (claims, bool) {
	m = m.withDefaults()
	var c claims
	c.Subject = scalar(raw[m.Subject])
	if c.Subject == "" || len(c.Subject) > maxSubject {
		return claims{}, false
	}
	if e, ok := identity.NormalizeEmail(scalar(raw[m.Email])); ok {
		c.Email = e
	}
	switch v := raw[m.EmailVerified].(type) {
	case bool:
		c.EmailVerified, c.VerifiedStated = v, true
	case string: // some upstreams send "true" (Apple did)
		c.EmailVerified, c.VerifiedStated = v == "true", true
	}
	if n := strings.TrimSpace(scalar(raw[m.Name])); n != "" && len([]rune(n)) <= maxName && !strings.ContainsFunc(n, isControl) {
		c.Name = &n
	}
	return c, true
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// scalar reads a string or a number (GitHub's ids are numbers) as text.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	}
	return ""
}
