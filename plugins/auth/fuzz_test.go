package auth

import (
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/identity"
)

// FuzzClientAuth: any requested scope and client role are judged without panicking; a
// granted scope only names roles up to the client's and agent scopes the client holds,
// and the role claim never exceeds its role.
func FuzzClientAuth(f *testing.F) {
	for _, s := range []string{"viewer developer", "admin", "", "viewer  viewer", "root", "mcp:tools", "mcp:tools admin", "files:read"} {
		f.Add(s, "developer")
	}
	held := []string{"mcp:*"}
	f.Fuzz(func(t *testing.T, scope, role string) {
		granted, ok := grantScope(scope, role, held)
		if !ok {
			return
		}
		for _, s := range strings.Fields(granted) {
			if identity.RoleRank(s) > identity.RoleRank(role) || (identity.RoleRank(s) == 0 && !strings.HasPrefix(s, "mcp:")) {
				t.Fatalf("granted %q to role %q holding %v", s, role, held)
			}
		}
		if r := highestRole(granted); identity.RoleRank(r) > identity.RoleRank(role) {
			t.Fatalf("role claim %q above %q", r, role)
		}
	})
}
