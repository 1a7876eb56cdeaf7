package s3

import (
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
			_ = signedBy(k.signingKey(c), c, cr.withPath(r.path))
			_, _ = reencoded(r.path)
		}
		_ = bucketOf(r, "s3.example.test")
		_ = c.at.Add(time.Second)
	})
}
