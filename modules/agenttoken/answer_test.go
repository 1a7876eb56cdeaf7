package agenttoken

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// The hand-written ai/me answer and encoding/json's encoding of the same meBody are the
// same bytes, for any strings, scopes (none, empty, several), creator (none or one) and
// expiry (any year and zone; those RFC 3339 cannot write fail both ways).
func FuzzMeMatchesEncodingJSON(f *testing.F) {
	f.Add("tok_01JABCDEFGHJKMNPQRSTVWXYZ0", "support-bot", "tickets:read", "usr_01J", 2, true, int64(1767225600), 0)
	f.Add("\u2028\x00\"\\", "<a&b> é\xff", "", "", 0, false, int64(-62135596800-1), 3600)
	f.Add("", "", "x", "", -1, true, int64(253402300800), -86399)
	f.Fuzz(func(t *testing.T, id, name, scope, creator string, scopes int, created bool, sec int64, offset int) {
		m := meBody{Engine: engineName, Authenticated: true, Kind: Kind, TokenID: id, ProjectID: "prj_" + id, AgentName: name,
			ExpiresAt: time.Unix(sec, sec%1000).In(time.FixedZone("z", offset%(48*3600)))}
		if scopes >= 0 {
			m.Scopes = []string{}
			for range scopes % 4 {
				m.Scopes = append(m.Scopes, scope)
			}
		}
		if created {
			m.CreatedBy = &creator
		}
		want, werr := json.Marshal(m)
		got, gerr := appendMe([]byte("x"), m)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("errors differ: encoding/json %v, appendMe %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendMe\n%s\nencoding/json\n%s", got, want)
		}
	})
}

// BenchmarkMeAnswer encodes a typical ai/me answer the two ways.
func BenchmarkMeAnswer(b *testing.B) {
	creator := "usr_01JABCDEFGHJKMNPQRSTVWXYZ0"
	m := meBody{Engine: engineName, Authenticated: true, Kind: Kind, TokenID: "tok_01JABCDEFGHJKMNPQRSTVWXYZ0", ProjectID: "prj_01JABCDEFGHJKMNPQRSTVWXYZ0",
		AgentName: "support-bot", Scopes: []string{"tickets:read", "tickets:write"}, CreatedBy: &creator, ExpiresAt: time.Now().UTC()}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("by-hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := appendMe(make([]byte, 0, 320), m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
