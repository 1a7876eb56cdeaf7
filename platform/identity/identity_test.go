package identity

import (
	"context"
	"strings"
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

func TestValidDomain(t *testing.T) {
	for d, want := range map[string]bool{
		"example.com": true, "a.b.example.co.uk": true, "x-1.example": true, "xn--bcher-kva.example": true,
		"": false, "localhost": false, "Example.com": false, "-a.example": false, "a-.example": false,
		"a..example": false, "example.com.": false, "example.123": false, "a b.example": false, "a_b.example": false,
		strings.Repeat("a.", 125) + "abc": true, strings.Repeat("a.", 125) + "abcd": false,
		strings.Repeat("a", 63) + ".example": true, strings.Repeat("a", 64) + ".example": false,
	} {
		if got := ValidDomain(d); got != want {
			t.Errorf("ValidDomain(%q) = %v, want %v", d, got, want)
		}
	}
	if !SharedMailDomain("gmail.com") || SharedMailDomain("acme.example") {
		t.Error("SharedMailDomain")
	}
}
