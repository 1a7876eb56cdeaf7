package identity

import (
	"context"
	"testing"
)

func TestRoleRank(t *testing.T) {
	if !(RoleRank(RoleViewer) < RoleRank(RoleDeveloper) && RoleRank(RoleDeveloper) < RoleRank(RoleAdmin)) {
		t.Fatal("roles are not ordered viewer < developer < admin")
	}
	for _, s := range []string{"", "owner", "Admin", "admin "} {
		if RoleRank(s) != 0 {
			t.Errorf("RoleRank(%q) = %d, want 0", s, RoleRank(s))
		}
	}
}

func TestIssuer(t *testing.T) {
	if got := IssuerFrom(context.Background()); got != LegacyIssuer {
		t.Fatalf("no issuer: %q", got)
	}
	if got := IssuerFrom(WithIssuer(context.Background(), "")); got != LegacyIssuer {
		t.Fatalf("empty issuer: %q", got)
	}
	if got := IssuerFrom(WithIssuer(context.Background(), "https://auth.example.com")); got != "https://auth.example.com" {
		t.Fatalf("%q", got)
	}
}

func TestVerifyError(t *testing.T) {
	if (&VerifyError{Reason: "token_expired"}).Error() != "session not verified: token_expired" {
		t.Fatal("VerifyError")
	}
}
