package secret

import (
	"regexp"
	"strings"
	"testing"
)

var scanner = regexp.MustCompile(`^ac_ai_[0-9A-Za-z]{38}$`)

func TestNewTokenShape(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		tok, err := NewToken("ai")
		if err != nil {
			t.Fatal(err)
		}
		if !scanner.MatchString(tok) {
			t.Fatalf("%q does not match the scanner pattern", tok)
		}
		if !CheckToken("ai", tok) {
			t.Fatalf("%q fails its own checksum", tok)
		}
		if seen[tok] {
			t.Fatal("duplicate token")
		}
		seen[tok] = true
	}
}

func TestCheckTokenRejects(t *testing.T) {
	tok, _ := NewToken("ai")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		return string(b)
	}
	db, _ := NewToken("db")
	cases := map[string]string{
		"tampered random":   flip(tok, 10),
		"tampered checksum": flip(tok, len(tok)-1),
		"other kind":        db,
		"truncated":         tok[:len(tok)-1],
		"extended":          tok + "a",
		"non-base62":        tok[:10] + "-" + tok[11:],
		"empty":             "",
		"prefix only":       "ac_ai_",
	}
	for name, s := range cases {
		if CheckToken("ai", s) {
			t.Errorf("%s: %q accepted", name, s)
		}
	}
}

func TestHintAndKind(t *testing.T) {
	tok, _ := NewToken("ai")
	h := Hint(tok)
	if !strings.HasPrefix(h, "ac_ai_"+tok[6:10]+"…") || !strings.HasSuffix(h, tok[len(tok)-4:]) {
		t.Fatalf("hint %q of %q", h, tok)
	}
	if KindOf(tok) != "ai" || KindOf("ac_s3_x") != "s3" || KindOf("nope") != "" {
		t.Fatal("KindOf")
	}
}

func TestDigestEqual(t *testing.T) {
	a, b := DigestOf("x"), DigestOf("x")
	if !Equal(a.Bytes(), b.Bytes()) || Equal(a.Bytes(), DigestOf("y").Bytes()) {
		t.Fatal("Equal")
	}
}
