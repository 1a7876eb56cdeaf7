package httpserver

import "testing"

// FuzzQueryLimit: any ?limit= text gives a limit within 1..max, the default when absent.
func FuzzQueryLimit(f *testing.F) {
	for _, s := range []string{"", "50", "0", "-5", "1e9", "Infinity", "NaN", "12.9", "abc", "0x10", " 7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := QueryLimit(raw, 50, 500)
		if got < 1 || got > 500 || (raw == "" && got != 50) {
			t.Fatalf("QueryLimit(%q) = %d", raw, got)
		}
	})
}

// FuzzBearerToken: a token is returned only from a header that starts with "Bearer ",
// trimmed, and never longer than the header.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer abc", "Bearer ", "Bearer   x  ", "Basic x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok := BearerToken(h)
		if tok != "" && (len(h) < 7 || h[:7] != "Bearer " || len(tok) > len(h)-7) {
			t.Fatalf("BearerToken(%q) = %q", h, tok)
		}
	})
}
