package identity

import (
	"net/mail"
	"strings"
)

// MaxEmail bounds an address (RFC 5321's path limit less its brackets).
const MaxEmail = 254

// NormalizeEmail checks that s is a bare address that net/mail parses — no display name,
// no comment — of at most MaxEmail bytes, and lower-cases it: the one form accounts and
// invitations are stored and compared in.
func NormalizeEmail(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > MaxEmail {
		return "", false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return "", false
	}
	return strings.ToLower(s), true
}
