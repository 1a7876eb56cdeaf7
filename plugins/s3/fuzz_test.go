package s3

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzVerifyInput: any verify body is either refused with a 400 or read into a request
// whose credential, canonical request and bucket can be computed without panicking.
func FuzzVerifyInput(f *testing.F) {
	for _, s := range []string{
		`{"method":"GET","path":"/b/k","headers":{"host":"h","authorization":"AWS4-HMAC-SHA256 Credential=AKAC/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc","x-amz-date":"20260101T000000Z"}}`,
		`{"method":"GET","path":"/b/k%20x","query":"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKAC%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00","headers":{"host":"b.s3.example.test"}}`,
		`{"method":"PUT","path":"/","payloadHash":"STREAMING-AWS4-HMAC-SHA256-PAYLOAD","headers":{"host":"h","authorization":"x","x-amz-date":"y"}}`,
		`{"method":null}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseVerify(body)
		if err != nil {
			return
		}
		c, ok := parseCredential(r)
		if !ok {
			return
		}
		if cr, ok := canonicalRequest(r, c); ok {
			k := &key{secret: "secret"}
			canonical := cr.withPath(r.path)
			d := k.signingKeyOf(c)
			want := signature(d.key, c, canonical)
			if signedWith(d, c, canonical) != (c.signature == want) {
				t.Fatalf("signedWith disagrees with the definition for %q", c.signature)
			}
			c.signature = want
			if !signedWith(d, c, canonical) {
				t.Fatal("signedWith refuses the defined signature")
			}
			_, _ = reencoded(r.path)
		}
		_ = bucketOf(r, "s3.example.test")
		_ = c.at.Add(time.Second)
	})
}

// FuzzDecodeVerify: whatever the one-pass decoder accepts, the field-by-field reading reads
// as the same fields, without a type violation; so both readings answer alike.
func FuzzDecodeVerify(f *testing.F) {
	for _, s := range []string{
		`{"method":"GET","path":"/b/k","headers":{"host":"h"}}`,
		`{"method":"GET","path":"/b/k","query":"a=1","payloadHash":"UNSIGNED-PAYLOAD","headers":{"host":"h","x-amz-date":"d"},"extra":[1,{"x":null}]}`,
		`{"method":"GET","method":"PUT","path":"/","headers":{}}`,
		`{"method":"GET","path":"/","headers":{"a":"1","a":"2"}}`,
		`{"Method":"GET","path":"/","headers":{}}`,
		`{"method":"GET","path":"/","headers":{}} {}`,
		`{"method":"G\u00e9T","path":"/\ud800","headers":{"h":"\u0000"}}`,
		`{"method":"GET","path":"/","headers":{"h":5}}`,
		`{"method":"GET","path":"/","headers":{}}`,
		` { "method" : "GET" , "path":"/é", "headers" : { "host" : "h" } } `,
		`{"method":"GET","path":"/","headers":{"h":"v"},"headers":{}}`,
		`{"method":"GET","path":"/","query":"a=1\u0026b=2","headers":{}}`,
		"{\"method\":\"GET\",\"path\":\"/\xff\",\"headers\":{}}",
		`{"method":"GET","path":"/","headers":{},}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for name, pass := range map[string]func([]byte) (verifyFields, bool){"hand-written scan": scanVerify, "jsontext pass": decodeVerify} {
			fast, ok := pass(body)
			if !ok {
				continue
			}
			slow, fields := readVerify(body)
			if err := fields.Err(); err != nil {
				t.Fatalf("the %s read %q, field by field refused it: %v", name, body, err)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%q: %s %+v, field by field %+v", body, name, fast, slow)
			}
		}
		// The scan takes only what jsontext takes: it falls back, never widens.
		if _, ok := scanVerify(body); ok {
			if _, ok := decodeVerify(body); !ok {
				t.Fatalf("the hand-written scan read %q, which jsontext refuses", body)
			}
		}
	})
}

// signature is SigV4's definition, written plainly: the reference signedWith is held to.
func signature(signingKey []byte, c credential, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	sts := algorithm + "\n" + c.amzDate + "\n" + c.scope() + "\n" + hex.EncodeToString(sum[:])
	return hex.EncodeToString(hmacSHA256(signingKey, sts))
}

// FuzzParseCredential holds the Authorization header reading, which cuts in place, to the
// plain definition by strings.Split and time.Format.
func FuzzParseCredential(f *testing.F) {
	for _, s := range []string{
		"AWS4-HMAC-SHA256 Credential=AKAC/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKAC/20260101/us-east-1/s3/aws4_request/x,SignedHeaders=host,Signature=abc,",
		"AWS4-HMAC-SHA256 Credential=/20260101/r/s3/aws4_request, SignedHeaders=, Signature=",
	} {
		f.Add(s, "20260101T000000Z")
	}
	f.Fuzz(func(t *testing.T, auth, amzDate string) {
		r := signedRequest{headers: map[string]string{"authorization": auth, "x-amz-date": amzDate}}
		got, ok := parseCredential(r)
		want, wantOK := splitCredential(auth, amzDate)
		if ok != wantOK || ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q %q: %+v %v, want %+v %v", auth, amzDate, got, ok, want, wantOK)
		}
	})
}

// splitCredential is parseCredential's header branch as first written.
func splitCredential(auth, amzDate string) (credential, bool) {
	var c credential
	var scope, signed string
	rest, ok := strings.CutPrefix(auth, algorithm+" ")
	if !ok {
		return c, false
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			scope = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			c.signature = v
		}
	}
	c.amzDate = amzDate
	parts := strings.Split(scope, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" || parts[0] == "" || signed == "" || c.signature == "" {
		return c, false
	}
	c.accessKey, c.date, c.region, c.service = parts[0], parts[1], parts[2], parts[3]
	c.signedHeaders = strings.Split(signed, ";")
	at, err := time.Parse(amzDateLayout, c.amzDate)
	if err != nil || at.Format("20060102") != c.date {
		return c, false
	}
	c.at = at
	return c, true
}
