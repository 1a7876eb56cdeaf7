package session_test

import (
	"context"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/session"
	"github.com/authcore/authcore/platform/oauth"
)

// BenchmarkAuthenticateWarm is session verification with warm caches: the signature check
// is cached per token, the revocation check is a cache hit. Through HTTP, see
// `authcore bench`.
func BenchmarkAuthenticateWarm(b *testing.B) {
	var engine *session.Engine
	a := apptest.StartURL(b, "sqlite", "sqlite:"+b.TempDir()+"/b.db", apptest.WithFx(fx.Populate(&engine)))
	s := a.SignUp(b)
	ctx := context.Background()
	if _, err := engine.Authenticate(ctx, s.AccessToken); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := engine.Authenticate(ctx, s.AccessToken); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateCold verifies the Ed25519 signature every time (a new token per
// iteration is too costly to mint, so the token cache is purged instead by using a fresh
// engine view): the cost the token cache saves.
func BenchmarkAuthenticateCold(b *testing.B) {
	var engine *session.Engine
	a := apptest.StartURL(b, "sqlite", "sqlite:"+b.TempDir()+"/b.db", apptest.WithFx(fx.Populate(&engine)))
	s := a.SignUp(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		engine.ForgetVerifiedTokens()
		if _, err := engine.Authenticate(ctx, s.AccessToken); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignAccessToken is one OAuth access token signed (client credentials and token
// exchange each sign one per grant): claims encoded, Ed25519 signature, compact form.
func BenchmarkSignAccessToken(b *testing.B) {
	var issuer *session.Issuer
	apptest.StartURL(b, "sqlite", "sqlite:"+b.TempDir()+"/b.db", apptest.WithFx(fx.Populate(&issuer)))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		claims := oauth.Claims{Subject: "cli_01JABCDEFGHJKMNPQRSTVWXYZ0", ClientID: "cli_01JABCDEFGHJKMNPQRSTVWXYZ0",
			Audience: "https://mcp.example.com/files", IssuedAt: 1764000000, Expires: 1764003600, ID: "jti_01JABCDEFGHJKMNPQRSTVWXYZ0",
			ProjectID: "prj_01JABCDEFGHJKMNPQRSTVWXYZ0", Role: "developer", Scope: "developer"}
		if _, err := issuer.SignAccessToken(ctx, claims); err != nil {
			b.Fatal(err)
		}
	}
}
