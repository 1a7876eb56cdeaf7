package auth

import (
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/identity"
)

// FuzzClientAuth: any Authorization header and scope are judged without panicking; a
// granted scope only names roles up to the client's, and the role claim never exceeds it.
func FuzzClientAuth(f *testing.F) {
	for _, s := range []string{"Basic Y2xpOnNlY3JldA==", "basic Y2xp", "Basic !!!", "Basic " + "JTIy", "Bearer x", ""} {
		f.Add(s, "viewer developer", "developer")
	}
	f.Fuzz(func(t *testing.T, header, scope, role string) {
		_, _, _, _ = basicAuth(header)
		granted, ok := grantScope(scope, role)
		if !ok {
			return
		}
		for _, s := range strings.Fields(granted) {
			if identity.RoleRank(s) == 0 || identity.RoleRank(s) > identity.RoleRank(role) {
				t.Fatalf("granted %q to role %q", s, role)
			}
		}
		if r := highestRole(granted); identity.RoleRank(r) > identity.RoleRank(role) {
			t.Fatalf("role claim %q above %q", r, role)
		}
	})
}
