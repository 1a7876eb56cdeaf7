package secret

import (
	"strings"
	"testing"
)

// FuzzCheckToken: any string is judged without panicking; what passes has the shape of
// the token format, and KindOf agrees with the kind it was checked for.
func FuzzCheckToken(f *testing.F) {
	good, _ := NewToken("ai")
	for _, s := range []string{good, good[:len(good)-1] + "0", "ac_ai_", "", "ac__x", "ac_s3_" + strings.Repeat("z", 38), "ac_ai_\xff"} {
		f.Add("ai", s)
	}
	f.Fuzz(func(t *testing.T, kind, token string) {
		if !CheckToken(kind, token) {
			return
		}
		if !strings.HasPrefix(token, "ac_"+kind+"_") || len(token) != len("ac_"+kind+"_")+38 {
			t.Fatalf("%q passed for kind %q", token, kind)
		}
		if !strings.Contains(kind, "_") && KindOf(token) != kind {
			t.Fatalf("KindOf(%q) = %q, want %q", token, KindOf(token), kind)
		}
		_ = Hint(token)
	})
}
