package oauth

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/authcore/authcore/platform/oauth"
)

// FuzzAnswerMatchesEncodingJSON: an introspection answer is encoded to exactly the bytes
// encoding/json makes of it, whatever its strings hold and whatever else its values are.
func FuzzAnswerMatchesEncodingJSON(f *testing.F) {
	f.Add("sub", "tok_01J", int64(1767225600), true, "db:read db:write", 1.5, "<a&b>")
	f.Add("", "\u2028\x00\"\\", int64(-1), false, "é\xff", -0.0, "scope")
	f.Fuzz(func(t *testing.T, k1, s1 string, n int64, b bool, s2 string, fl float64, k2 string) {
		m := map[string]any{k1: s1, "exp": n, "active": b, "scope": s2, "iat": int(n), "ratio": fl,
			"aud": []string{s1, s2}, "cnf": map[string]any{k2: s2}, k2: nil, "extra": json.RawMessage(`{"x":1}`)}
		want, werr := json.Marshal(m)
		got, gerr := appendAnswer(nil, m)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("errors differ: encoding/json %v, appendAnswer %v", werr, gerr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendAnswer\n%s\nencoding/json\n%s", got, want)
		}
	})
}

// BenchmarkIntrospectionAnswer encodes a typical active answer the two ways.
func BenchmarkIntrospectionAnswer(b *testing.B) {
	m := map[string]any{"sub": "tok_01JABCDEFGHJKMNPQRSTVWXYZ0", "token_id": "tok_01JABCDEFGHJKMNPQRSTVWXYZ0", "agent_name": "support-bot",
		"scope": "tickets:read", "exp": int64(1767225600), "token_type": "Bearer", "active": true,
		"iss": "https://auth.example.com", "project_id": "prj_01JABCDEFGHJKMNPQRSTVWXYZ0"}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendAnswer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := appendAnswer(make([]byte, 0, 512), m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzTokenMatchesEncodingJSON: a token answer is encoded to exactly the bytes
// encoding/json makes of oauth.Token, empty optional fields included.
func FuzzTokenMatchesEncodingJSON(f *testing.F) {
	f.Add("eyJhbGciOiJFZERTQSJ9.e30.sig", "", "Bearer", 900, "tools:call", "ac_gr_x", "eyJhbGciOiJSUzI1NiJ9.e30.sig")
	f.Add("<&>", "urn:ietf:params:oauth:token-type:access_token", "", -1, "", "\u2028\xff\"", "")
	// Every field of the answer is one the hand-written encoder writes: a field added to
	// oauth.Token without it fails here (an id_token once went missing that way).
	if n := reflect.TypeFor[oauth.Token]().NumField(); n != 8 {
		f.Fatalf("oauth.Token has %d fields; appendToken writes 8", n)
	}
	f.Fuzz(func(t *testing.T, access, issued, typ string, expires int, scope, refresh, idToken string) {
		tok := oauth.Token{AccessToken: access, IssuedTokenType: issued, TokenType: typ, ExpiresIn: expires, Scope: scope, RefreshToken: refresh, IDToken: idToken}
		if refresh != "" { // authorization details are compact JSON; the refresh token's text makes some
			tok.AuthorizationDetails, _ = json.Marshal([]map[string]string{{"type": refresh}})
		}
		want, werr := json.Marshal(tok)
		got, gerr := appendToken(nil, tok)
		if werr != nil || gerr != nil {
			t.Fatalf("errors: encoding/json %v, appendToken %v", werr, gerr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendToken\n%s\nencoding/json\n%s", got, want)
		}
	})
}
