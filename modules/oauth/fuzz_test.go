package oauth

import (
	"encoding/base64"
	"net/url"
	"testing"
)

// FuzzBasicAuth: any Authorization header is judged without panicking, and a client id
// and secret encoded as RFC 6749 §2.3.1 says come back as they were.
func FuzzBasicAuth(f *testing.F) {
	for _, s := range []string{"Basic Y2xpOnNlY3JldA==", "basic Y2xp", "Basic !!!", "Basic JTIy", "Bearer x", ""} {
		f.Add(s, "cli_1", "ac_cs_secret")
	}
	f.Fuzz(func(t *testing.T, header, id, secret string) {
		_, _, _, _ = basicAuth(header)
		h := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
		gotID, gotSecret, present, err := basicAuth(h)
		if err != nil || !present || gotID != id || gotSecret != secret {
			t.Fatalf("basicAuth(%q) = %q, %q, %v, %v; want %q, %q", h, gotID, gotSecret, present, err, id, secret)
		}
	})
}
