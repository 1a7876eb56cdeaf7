package auth

import (
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/identity"
)

// FuzzClientAuth: any requested scope and client role are judged without panicking; a
// granted scope only names roles up to the client's, and the role claim never exceeds it.
func FuzzClientAuth(f *testing.F) {
	for _, s := range []string{"viewer developer", "admin", "", "viewer  viewer", "root"} {
		f.Add(s, "developer")
	}
	f.Fuzz(func(t *testing.T, scope, role string) {
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
