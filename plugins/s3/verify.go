package s3

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/usage"
)

// VerifyPath is where a storage gateway checks a SigV4-signed request.
const VerifyPath = "/v1/service-badges/s3/verify"

const (
	algorithm      = "AWS4-HMAC-SHA256"
	amzDateLayout  = "20060102T150405Z"
	unsignedBody   = "UNSIGNED-PAYLOAD"
	maxPresignSecs = 7 * 24 * 3600
)

// Reasons of SPEC §9. Unknown, revoked and expired keys are one reason: the endpoint is
// public, so it must not tell which keys exist.
const (
	reasonBadSignature   = "bad_signature"
	reasonInvalidKey     = "invalid_access_key"
	reasonClockSkew      = "clock_skew"
	reasonPresignExpired = "presign_expired"
	reasonBucketMismatch = "bucket_mismatch"
	reasonMalformed      = "malformed"
)

// payloadHashes are the x-amz-content-sha256 values S3 accepts besides a hex SHA-256:
// modern SDKs and minio-go stream uploads with the STREAMING-… ones.
var payloadHashes = map[string]bool{
	unsignedBody:                                       true,
	"STREAMING-UNSIGNED-PAYLOAD-TRAILER":               true,
	"STREAMING-AWS4-HMAC-SHA256-PAYLOAD":               true,
	"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER":       true,
	"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD":         true,
	"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER": true,
}

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func validPayloadHash(s string) bool { return payloadHashes[s] || hexSHA256.MatchString(s) }

func (p *Product) routes() []httpserver.Route {
	return []httpserver.Route{{Method: http.MethodPost, Path: VerifyPath, Handlers: []fiber.Handler{p.verify}}}
}

// signedRequest is a validated verify body.
type signedRequest struct {
	method, path, payloadHash string
	query                     url.Values
	headers                   map[string]string // lower-case names
	presigned                 bool
}

// verifyFields are the verify body's fields, read but not yet checked.
type verifyFields struct {
	method, path       string
	query, payloadHash *string
	headers            map[string]string
}

// parseVerify reads and checks a verify body. A well-formed body is decoded in one pass;
// anything else is read again field by field, so the 400 lists every violation.
func parseVerify(body []byte) (signedRequest, error) {
	v, ok := scanVerify(body)
	if !ok {
		v, ok = decodeVerify(body)
	}
	if ok {
		failed := false
		r := v.check(func(string, string) { failed = true })
		if !failed {
			return r, nil
		}
	}
	v, f := readVerify(body)
	r := v.check(f.Fail)
	return r, f.Err()
}

// readVerify reads a verify body field by field, reporting every violation to its Fields.
func readVerify(body []byte) (verifyFields, *jsonbody.Fields) {
	f := jsonbody.Read(body)
	var v verifyFields
	str := func(name string) string {
		s, st := f.String(name)
		if st != jsonbody.OK && st != jsonbody.Absent {
			f.Fail(name, "must be a string")
		}
		return s
	}
	optional := func(name string) *string {
		if _, st := f.String(name); st == jsonbody.Absent {
			return nil
		}
		s := str(name)
		return &s
	}
	v.method, v.path, v.query, v.payloadHash = str("method"), str("path"), optional("query"), optional("payloadHash")
	if raw, ok := f.Object["headers"]; ok {
		h, ok := jsonbody.Parse(raw)
		if !ok {
			f.Fail("headers", "must be an object of strings")
		}
		v.headers = map[string]string{}
		for name := range h {
			s, st := h.String(name)
			if st != jsonbody.OK {
				f.Fail("headers."+name, "must be a string")
			}
			v.headers[name] = s
		}
	}
	return v, f
}

// decodeVerify is the one-pass decoding of a well-formed body: its JSON tokens are read in
// order with jsontext (no reflection, no intermediate map), each known field taking a
// string (headers: an object of strings). Anything else — null, another type, a duplicate
// name, trailing data, invalid UTF-8, a missing field — is not ok, and the field-by-field
// reading decides (FuzzDecodeVerify holds the two to the same fields). encoding/json's
// reflection was three fifths of the route's time (authcore bench profile).
func decodeVerify(body []byte) (verifyFields, bool) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	d.r.Reset(body)
	d.dec.Reset(&d.r)
	var v verifyFields
	str := func() (string, bool) {
		t, err := d.dec.ReadToken()
		if err != nil || t.Kind() != '"' {
			return "", false
		}
		return t.String(), true
	}
	if t, err := d.dec.ReadToken(); err != nil || t.Kind() != '{' {
		return v, false
	}
	var method, path bool
	for d.dec.PeekKind() == '"' {
		name, _ := str()
		var ok bool
		switch name {
		case "method":
			v.method, ok = str()
			method = true
		case "path":
			v.path, ok = str()
			path = true
		case "query":
			var q string
			q, ok = str()
			v.query = &q
		case "payloadHash":
			var h string
			h, ok = str()
			v.payloadHash = &h
		case "headers":
			ok = d.headers(&v, str)
		default:
			ok = d.dec.SkipValue() == nil
		}
		if !ok {
			return v, false
		}
	}
	if t, err := d.dec.ReadToken(); err != nil || t.Kind() != '}' || !method || !path || v.headers == nil {
		return v, false
	}
	if _, err := d.dec.ReadToken(); err != io.EOF { // one value, then nothing
		return v, false
	}
	return v, true
}

// headers reads the headers object: names to strings.
func (d *decoder) headers(v *verifyFields, str func() (string, bool)) bool {
	if t, err := d.dec.ReadToken(); err != nil || t.Kind() != '{' {
		return false
	}
	v.headers = make(map[string]string, 8)
	for d.dec.PeekKind() == '"' {
		name, _ := str()
		value, ok := str()
		if !ok {
			return false
		}
		v.headers[name] = value
	}
	t, err := d.dec.ReadToken()
	return err == nil && t.Kind() == '}'
}

// decoder is a reusable token reader over a body.
type decoder struct {
	r   bytes.Reader
	dec jsontext.Decoder
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// lowerNames is headers with lower-case names: headers itself when they are already (as
// gateways send them), so the common case copies nothing.
func lowerNames(headers map[string]string) map[string]string {
	for name := range headers {
		if strings.ToLower(name) != name {
			lower := make(map[string]string, len(headers))
			for name, value := range headers {
				lower[strings.ToLower(name)] = value
			}
			return lower
		}
	}
	if headers == nil {
		return map[string]string{}
	}
	return headers
}

// check applies the verify body's rules, reporting each violation to fail.
func (v verifyFields) check(fail func(field, reason string)) signedRequest {
	var r signedRequest
	if v.method == "" || strings.ToUpper(v.method) != v.method {
		fail("method", "must be an upper-case HTTP method")
	}
	r.method = v.method
	// path is the raw request path, still percent-encoded as it was sent.
	if !strings.HasPrefix(v.path, "/") {
		fail("path", "must be a string starting with /")
	}
	r.path = v.path
	r.query = url.Values{}
	if v.query != nil {
		q, err := url.ParseQuery(strings.TrimPrefix(*v.query, "?"))
		if err != nil {
			fail("query", "is not a valid query string")
		}
		r.query = q
	}
	r.presigned = r.query.Get("X-Amz-Signature") != ""
	r.headers = lowerNames(v.headers)
	if v.headers == nil {
		fail("headers", "is required")
	} else {
		required := []string{"host"}
		if !r.presigned {
			required = append(required, "authorization", "x-amz-date")
		}
		for _, name := range required {
			if r.headers[name] == "" {
				fail("headers."+name, "is required")
			}
		}
	}
	switch {
	case v.payloadHash != nil:
		if !validPayloadHash(*v.payloadHash) {
			fail("payloadHash", "must be a hex SHA-256 or a value S3 accepts in x-amz-content-sha256")
		}
		r.payloadHash = *v.payloadHash
	case r.headers["x-amz-content-sha256"] != "":
		r.payloadHash = r.headers["x-amz-content-sha256"]
	default:
		r.payloadHash = unsignedBody
	}
	return r
}

// verdict is the answer: valid with the key's facts, or invalid with a reason.
type verdict struct {
	Valid     bool   `json:"valid"`
	Reason    string `json:"reason,omitempty"`
	BadgeID   string `json:"badgeId,omitempty"`
	ProjectID string `json:"projectId,omitempty"`
	Bucket    string `json:"bucket,omitempty"`
	Role      string `json:"role,omitempty"`
}

// answers are the pre-encoded invalid verdicts, one per reason.
var answers = func() map[string][]byte {
	m := map[string][]byte{}
	for _, r := range []string{reasonBadSignature, reasonInvalidKey, reasonClockSkew, reasonPresignExpired, reasonBucketMismatch, reasonMalformed} {
		m[r], _ = json.Marshal(verdict{Reason: r}) // cannot fail: two plain fields
	}
	return m
}()

func (p *Product) verify(c *fiber.Ctx) error {
	r, err := parseVerify(c.Body())
	if err != nil {
		return err
	}
	answer, result, err := p.check(c.UserContext(), r)
	if err != nil {
		return err
	}
	p.results[result].Inc()
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(answer)
}

// credential is what the client claims: its key and scope, the signing time, the headers
// it signed and its signature.
type credential struct {
	accessKey, date, region, service string
	amzDate                          string
	signedHeaders                    []string
	signature                        string
	at                               time.Time
	expires                          time.Duration // presigned only
}

// scope is the credential scope: date/region/service/aws4_request.
func (c credential) scope() string {
	return c.date + "/" + c.region + "/" + c.service + "/aws4_request"
}

// check verifies a request: the answer to send and its result ("ok" or the reason).
func (p *Product) check(ctx context.Context, r signedRequest) ([]byte, string, error) {
	invalid := func(reason string) ([]byte, string, error) { return answers[reason], reason, nil }
	cred, ok := parseCredential(r)
	if !ok || cred.region != p.region || cred.service != "s3" || dotSegments(r.path) {
		return invalid(reasonMalformed)
	}
	copySource, copying := r.headers["x-amz-copy-source"]
	if copying && dotSegments(copySource) {
		return invalid(reasonMalformed)
	}
	now := p.clock.Now()
	if cred.at.Sub(now) > maxClockSkew || (!r.presigned && now.Sub(cred.at) > maxClockSkew) {
		return invalid(reasonClockSkew)
	}
	if r.presigned && !now.Before(cred.at.Add(cred.expires)) {
		return invalid(reasonPresignExpired)
	}
	k, err := p.lookup(ctx, cred.accessKey)
	if err != nil {
		return nil, "", err
	}
	if k == nil {
		return invalid(reasonInvalidKey)
	}
	// From here the key is known: its badge's usage counts the verdict (SPEC §19).
	denied := func(reason string) ([]byte, string, error) {
		p.usage.Count(k.projectID, badgeKind, k.badgeID, usage.Denied)
		return invalid(reason)
	}
	if k.revoked || (k.expiresAt != nil && !now.Before(*k.expiresAt)) {
		return denied(reasonInvalidKey)
	}
	canonical, ok := canonicalRequest(r, cred)
	if !ok {
		return invalid(reasonMalformed)
	}
	if !k.signed(cred, canonical, r.path) {
		return denied(reasonBadSignature)
	}
	if bucketOf(r, p.endpointHost) != k.bucket {
		return denied(reasonBucketMismatch)
	}
	// CopyObject and UploadPartCopy read from the bucket x-amz-copy-source names: the key
	// must own that one too, or a key of one project copies out of another's.
	if copying && copySourceBucket(copySource) != k.bucket {
		return denied(reasonBucketMismatch)
	}
	p.usage.Count(k.projectID, badgeKind, k.badgeID, usage.OK)
	return k.valid, "ok", nil
}

// dotSegments reports a "." or ".." path segment, raw or percent-encoded (in any case, or
// encoded twice): the path S3 resolves would then not start with the bucket bucketOf saw.
func dotSegments(path string) bool {
	for i := 0; i < 2 && strings.Contains(path, "%"); i++ {
		decoded, err := url.PathUnescape(path)
		if err != nil {
			return true // not a path a client signs
		}
		path = decoded
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// copySourceBucket is the bucket of an x-amz-copy-source value: "bucket/key" or
// "/bucket/key", URL-encoded, optionally with "?versionId=…".
func copySourceBucket(v string) string {
	v, _, _ = strings.Cut(v, "?")
	if decoded, err := url.PathUnescape(v); err == nil {
		v = decoded
	}
	bucket, _, _ := strings.Cut(strings.TrimPrefix(v, "/"), "/")
	return bucket
}

// signed reports whether k's secret signed the request.
func (k *key) signed(cred credential, cr canonical, path string) bool {
	d := k.signingKeyOf(cred)
	if signedWith(d, cred, cr.withPath(path)) {
		return true
	}
	// Clients differ in how they escape characters such as '!' or '*' in a path: try it
	// re-encoded the SigV4 way before calling the signature bad.
	re, ok := reencoded(path)
	return ok && signedWith(d, cred, cr.withPath(re))
}

// signedWith reports whether c.signature signs canonical (SigV4: HMAC of the string to
// sign under the derived key, lower-case hex). It uses the derived key's pooled HMAC and
// writes the string to sign in pieces, so the warm path allocates no MAC and no joined
// string (BenchmarkSignature); FuzzVerifyInput holds it to the plain definition.
func signedWith(d *derived, c credential, canonical string) bool {
	sum := sha256.Sum256([]byte(canonical))
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	m := d.macs.Get().(hash.Hash)
	defer d.macs.Put(m)
	m.Reset()
	// The string to sign, assembled on the stack: io.WriteString to the MAC would copy
	// each piece to the heap.
	var sts [256]byte
	b := append(sts[:0], algorithm+"\n"...)
	for _, part := range [...]string{c.amzDate, "\n", c.date, "/", c.region, "/", c.service, "/aws4_request\n"} {
		b = append(b, part...)
	}
	m.Write(append(b, hexSum[:]...))
	var mac [sha256.Size]byte
	var got, presented [2 * sha256.Size]byte
	hex.Encode(got[:], m.Sum(mac[:0]))
	if len(c.signature) != len(presented) {
		return false
	}
	copy(presented[:], c.signature)
	return subtle.ConstantTimeCompare(got[:], presented[:]) == 1
}

// parseCredential reads the Authorization header, or for a presigned URL the X-Amz-*
// query parameters.
func parseCredential(r signedRequest) (credential, bool) {
	var c credential
	var scope, signed string
	if r.presigned {
		q := r.query
		if q.Get("X-Amz-Algorithm") != algorithm {
			return c, false
		}
		scope, signed, c.signature, c.amzDate = q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature"), q.Get("X-Amz-Date")
		secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
		if err != nil || secs < 1 || secs > maxPresignSecs {
			return c, false
		}
		c.expires = time.Duration(secs) * time.Second
	} else {
		rest, ok := strings.CutPrefix(r.headers["authorization"], algorithm+" ")
		if !ok {
			return c, false
		}
		for rest != "" {
			var part string
			part, rest, _ = strings.Cut(rest, ",")
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
		c.amzDate = r.headers["x-amz-date"]
	}
	var parts [5]string
	for i := range parts {
		var more bool
		parts[i], scope, more = strings.Cut(scope, "/")
		if more != (i < len(parts)-1) {
			return c, false // fewer or more than five parts
		}
	}
	if parts[4] != "aws4_request" || parts[0] == "" || signed == "" || c.signature == "" {
		return c, false
	}
	c.accessKey, c.date, c.region, c.service = parts[0], parts[1], parts[2], parts[3]
	c.signedHeaders = strings.Split(signed, ";")
	t, err := time.Parse(amzDateLayout, c.amzDate)
	// The layout starts with the date, digit for digit: once it parsed, the scope's date
	// must be its first eight characters.
	if err != nil || c.amzDate[:8] != c.date {
		return c, false
	}
	c.at = t
	return c, true
}

// SigV4 is computed here rather than by aws-sdk-go-v2's signer: that signer chooses for
// itself which headers to sign (it drops content-length: 0, which the AWS JS SDK, smithy
// and botocore sign on an empty PutObject), while a verifier must rebuild the canonical
// request from exactly the SignedHeaders the client listed. No maintained Go library
// verifies that way; the pieces below follow the SigV4 specification, and the tests sign
// with two independent clients (aws-sdk-go-v2 and minio-go).

// canonical is a canonical request without its path.
type canonical struct{ method, rest string }

func (c canonical) withPath(path string) string { return c.method + "\n" + path + c.rest }

// canonicalRequest returns the canonical request the client signed, but for its path.
func canonicalRequest(r signedRequest, c credential) (canonical, bool) {
	query := canonicalQuery(r.query, r.presigned)
	size := len(query) + len(payloadOf(r)) + 8
	for _, name := range c.signedHeaders {
		size += 2*len(name) + len(r.headers[name]) + 2
	}
	// One buffer, sized up front: the warm path's allocations are most of its cost.
	var b strings.Builder
	b.Grow(size)
	b.WriteByte('\n')
	b.WriteString(query)
	b.WriteByte('\n')
	for _, name := range c.signedHeaders {
		v, ok := r.headers[name]
		if !ok || name != strings.ToLower(name) {
			return canonical{}, false
		}
		b.WriteString(name)
		b.WriteByte(':')
		writeTrimmed(&b, v)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	for i, name := range c.signedHeaders {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(name)
	}
	b.WriteByte('\n')
	b.WriteString(payloadOf(r))
	return canonical{method: r.method, rest: b.String()}, true
}

// writeTrimmed writes v as SigV4 canonicalizes a header value: trimmed, every run of
// spaces one space. It is strings.Join(strings.Fields(v), " ") without their allocations
// for ASCII values, and exactly that otherwise (Fields knows Unicode's spaces).
func writeTrimmed(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		if v[i] >= utf8.RuneSelf {
			b.WriteString(strings.Join(strings.Fields(v), " "))
			return
		}
	}
	space := false
	wrote := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			space = true
			continue
		}
		if space && wrote {
			b.WriteByte(' ')
		}
		space = false
		wrote = true
		b.WriteByte(c)
	}
}

// reencoded is the path decoded and encoded again the SigV4 way, when that differs.
func reencoded(path string) (string, bool) {
	decoded, err := url.PathUnescape(path)
	if err != nil {
		return "", false
	}
	re := escape(decoded, false)
	return re, re != path
}

// payloadOf is the last line of the canonical request.
func payloadOf(r signedRequest) string {
	if r.presigned && r.payloadHash == "" {
		return unsignedBody
	}
	return r.payloadHash
}

// canonicalQuery sorts the parameters by name, then value, each escaped the SigV4 way; a
// presigned URL's own signature is not part of what it signed.
func canonicalQuery(q url.Values, presigned bool) string {
	type pair struct{ k, v string }
	var ps []pair
	for k, vs := range q {
		if presigned && k == "X-Amz-Signature" {
			continue
		}
		for _, v := range vs {
			ps = append(ps, pair{escape(k, true), escape(v, true)})
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].k != ps[j].k {
			return ps[i].k < ps[j].k
		}
		return ps[i].v < ps[j].v
	})
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// escape is SigV4's URI encoding: every byte but A-Z a-z 0-9 - . _ ~ as %XX (and '/' too
// unless it is a path).
func escape(s string, slash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/' && !slash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// signature is the hex HMAC of the string to sign under the derived signing key.
func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// derived is a signing key with the scope it was derived for, and HMACs keyed with it to
// reuse.
type derived struct {
	date, region, service string
	key                   []byte
	macs                  sync.Pool // of hash.Hash: HMAC-SHA256 under key
}

// signingKey derives the key for the credential's scope (signingKeyOf).
func (k *key) signingKey(c credential) []byte { return k.signingKeyOf(c).key }

// signingKeyOf derives the key for the credential's scope, or reuses the one derived for
// the same scope before: a key signs for a day, so a warm verification costs one HMAC of
// the string to sign instead of five.
func (k *key) signingKeyOf(c credential) *derived {
	if d := k.derived.Load(); d != nil && d.date == c.date && d.region == c.region && d.service == c.service {
		return d
	}
	kd := hmacSHA256([]byte("AWS4"+k.secret), c.date)
	kd = hmacSHA256(kd, c.region)
	kd = hmacSHA256(kd, c.service)
	kd = hmacSHA256(kd, "aws4_request")
	d := &derived{date: c.date, region: c.region, service: c.service, key: kd}
	d.macs.New = func() any { return hmac.New(sha256.New, kd) }
	k.derived.Store(d)
	return d
}

// bucketOf is the bucket a request addresses: the first label of a virtual-hosted-style
// host (bucket.endpoint-host), else the first segment of the path.
func bucketOf(r signedRequest, endpointHost string) string {
	host := strings.ToLower(r.headers["host"])
	if h, _, err := splitHostPort(host); err == nil {
		host = h
	}
	if endpointHost != "" {
		if b, ok := strings.CutSuffix(host, "."+endpointHost); ok && b != "" && !strings.Contains(b, ".") {
			return b
		}
	}
	path := r.path
	if decoded, err := url.PathUnescape(path); err == nil {
		path = decoded
	}
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return seg
}

// splitHostPort is net.SplitHostPort for hosts that may have no port.
func splitHostPort(h string) (string, string, error) {
	if i := strings.LastIndexByte(h, ':'); i > 0 && !strings.Contains(h[i:], "]") {
		return strings.Trim(h[:i], "[]"), h[i+1:], nil
	}
	return strings.Trim(h, "[]"), "", nil
}
