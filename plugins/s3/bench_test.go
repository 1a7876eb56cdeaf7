package s3

import (
	"strings"
	"testing"
)

// benchBody is a verify body as a storage gateway sends one for a signed GET.
const benchBody = `{"method":"GET","path":"/authcore-prj-01jabcdefghjkmnpqrstvwxyz0/reports/2026/q4.pdf","query":"versionId=3",` +
	`"headers":{"host":"127.0.0.1:9000","x-amz-date":"20261124T101500Z","x-amz-content-sha256":"UNSIGNED-PAYLOAD",` +
	`"authorization":"AWS4-HMAC-SHA256 Credential=AKAC0123456789ABCDEF/20261124/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=` +
	`0000000000000000000000000000000000000000000000000000000000000000"},"payloadHash":"UNSIGNED-PAYLOAD"}`

// BenchmarkParseVerify is the verify body decoded and checked: what every gateway request
// costs before any key is looked at.
func BenchmarkParseVerify(b *testing.B) {
	body := []byte(benchBody)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := parseVerify(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignature is a warm key's signature check: the canonical request built and
// hashed, the string to sign MACed with the cached signing key, compared.
func BenchmarkSignature(b *testing.B) {
	r, err := parseVerify([]byte(benchBody))
	if err != nil {
		b.Fatal(err)
	}
	c, ok := parseCredential(r)
	if !ok {
		b.Fatal("credential")
	}
	k := &key{secret: "0123456789012345678901234567890123456789"}
	cr, ok := canonicalRequest(r, c)
	if !ok {
		b.Fatal("canonical")
	}
	c.signature = signature(k.signingKey(c), c, cr.withPath(r.path))
	if !k.signed(c, cr, r.path) {
		b.Fatal("does not verify")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cr, _ := canonicalRequest(r, c)
		if !k.signed(c, cr, r.path) {
			b.Fatal("does not verify")
		}
	}
}

func TestLowerNames(t *testing.T) {
	lower := map[string]string{"host": "h", "x-amz-date": "d"}
	if got := lowerNames(lower); len(got) != 2 || got["host"] != "h" {
		t.Fatalf("%v", got)
	}
	mixed := map[string]string{"Host": "h", "X-Amz-Date": "d"}
	if got := lowerNames(mixed); len(got) != 2 || got["host"] != "h" || got["x-amz-date"] != "d" || mixed["Host"] != "h" {
		t.Fatalf("%v (from %v)", got, mixed)
	}
	if got := lowerNames(nil); got == nil || len(got) != 0 {
		t.Fatalf("%v", got)
	}
}

// writeTrimmed is SigV4's header-value canonicalization as strings.Fields and Join write it.
func FuzzWriteTrimmed(f *testing.F) {
	for _, s := range []string{"", " a  b ", "\tx\r\ny\v\fz", "a\u00a0 b", "\u3000", "x\xff y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		var b strings.Builder
		writeTrimmed(&b, v)
		if want := strings.Join(strings.Fields(v), " "); b.String() != want {
			t.Fatalf("%q: %q, want %q", v, b.String(), want)
		}
	})
}

// BenchmarkParseCredential is the Authorization header read into key, scope, signed
// headers and signing time.
func BenchmarkParseCredential(b *testing.B) {
	r, err := parseVerify([]byte(benchBody))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok := parseCredential(r); !ok {
			b.Fatal("credential")
		}
	}
}
