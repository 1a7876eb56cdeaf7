package identity

import (
	"net/mail"
	"strings"
)

// MaxEmail bounds an address (RFC 5321's path limit less its brackets).
const MaxEmail = 254

// FoldEmail is the one folding of an address: surrounding space dropped, lower-cased.
// It is what NormalizeEmail stores, and the key of anything that must treat two spellings
// of an address as one even when s is not a valid address (a rate limit's budget).
func FoldEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

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
	return FoldEmail(s), true
}
