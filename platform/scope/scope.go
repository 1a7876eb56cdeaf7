// Package scope is the scope grammar of SPEC §5 and its one coverage rule, shared by agent
// tokens, project policies, registered resources and every grant that narrows scopes.
package scope

import (
	"regexp"
	"strings"
)

// Pattern is the grammar of one scope.
var Pattern = regexp.MustCompile(`^[a-z][a-z0-9_.:*-]{0,63}$`)

// Valid reports whether s is one scope of the grammar.
func Valid(s string) bool { return Pattern.MatchString(s) }

// Covers reports whether a held scope grants s: itself, or "x:*" grants every "x:…".
func Covers(held, s string) bool {
	if held == s {
		return true
	}
	prefix, ok := strings.CutSuffix(held, "*")
	return ok && strings.HasSuffix(prefix, ":") && strings.HasPrefix(s, prefix) && len(s) > len(prefix)
}

// CoveredBy reports whether one of held grants s.
func CoveredBy(held []string, s string) bool {
	for _, h := range held {
		if Covers(h, s) {
			return true
		}
	}
	return false
}

// Parse splits a space-separated scope parameter (RFC 6749 §3.3) and checks each against
// the grammar: a value such as "files:read,admin:all" is one malformed scope, never
// minted verbatim. ok is false when any scope is malformed.
func Parse(param string) (scopes []string, ok bool) {
	scopes = strings.Fields(param)
	for _, s := range scopes {
		if !Valid(s) {
			return nil, false
		}
	}
	return scopes, true
}
