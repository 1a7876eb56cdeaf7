package s3

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
)

// VerifyPath is where a storage gateway checks a SigV4-signed request.
const VerifyPath = "/v1/service-badges/s3/verify"

const (
	algorithm      = "AWS4-HMAC-SHA256"
	amzDateLayout  = "20060102T150405Z"
	unsignedBody   = "UNSIGNED-PAYLOAD"
	maxPresignSecs = 7 * 24 * 3600
)

// The signature is recomputed by aws-sdk-go-v2's own signer (the one S3 clients use), never
// by hand: only the parsing of what the client sent is ours. S3 does not double-escape
// paths, so neither do we.
var signer = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })

func (p *Product) routes() []httpserver.Route {
	return []httpserver.Route{{Method: http.MethodPost, Path: VerifyPath, Handlers: []fiber.Handler{p.verify}}}
}

// signedRequest is a validated verify body.
type signedRequest struct {
	method, path, query, payloadHash string
	headers                          map[string]string // lower-case names
	presigned                        bool
}

// Issue is one violation of the verify body.
type Issue struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func parseVerify(body []byte) (signedRequest, error) {
	bad := func(issues ...Issue) error {
		return apperr.BadRequest("validation_failed", "invalid request body").With("issues", issues)
	}
	o, ok := jsonbody.Parse(body)
	if !ok {
		return signedRequest{}, bad(Issue{"body", "must be a JSON object"})
	}
	var r signedRequest
	var issues []Issue
	if s, st := o.String("method"); st != jsonbody.OK || s == "" || strings.ToUpper(s) != s {
		issues = append(issues, Issue{"method", "must be an upper-case HTTP method"})
	} else {
		r.method = s
	}
	if s, st := o.String("path"); st != jsonbody.OK || !strings.HasPrefix(s, "/") {
		issues = append(issues, Issue{"path", "must be a string starting with /"})
	} else {
		r.path = s
	}
	switch s, st := o.String("query"); st {
	case jsonbody.OK:
		r.query = strings.TrimPrefix(s, "?")
	case jsonbody.Absent:
	default:
		issues = append(issues, Issue{"query", "must be a string"})
	}
	q, err := url.ParseQuery(r.query)
	if err != nil {
		issues = append(issues, Issue{"query", "is not a valid query string"})
	}
	r.presigned = q.Get("X-Amz-Signature") != ""
	r.headers = map[string]string{}
	if raw, ok := o["headers"]; !ok {
		issues = append(issues, Issue{"headers", "is required"})
	} else if h, ok := jsonbody.Parse(raw); !ok {
		issues = append(issues, Issue{"headers", "must be an object of strings"})
	} else {
		for name := range h {
			v, st := h.String(name)
			if st != jsonbody.OK {
				issues = append(issues, Issue{"headers." + name, "must be a string"})
				continue
			}
			r.headers[strings.ToLower(name)] = v
		}
		required := []string{"host"}
		if !r.presigned {
			required = append(required, "authorization", "x-amz-date")
		}
		for _, name := range required {
			if r.headers[name] == "" {
				issues = append(issues, Issue{"headers." + name, "is required"})
			}
		}
	}
	switch s, st := o.String("payloadHash"); st {
	case jsonbody.OK:
		if s != unsignedBody && !hexSHA256.MatchString(s) {
			issues = append(issues, Issue{"payloadHash", "must be hex SHA-256 or UNSIGNED-PAYLOAD"})
		}
		r.payloadHash = s
	case jsonbody.Absent:
		r.payloadHash = r.headers["x-amz-content-sha256"]
		if r.payloadHash == "" {
			r.payloadHash = unsignedBody
		}
	default:
		issues = append(issues, Issue{"payloadHash", "must be a string"})
	}
	if len(issues) > 0 {
		return signedRequest{}, bad(issues...)
	}
	return r, nil
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

func invalid(reason string) verdict { return verdict{Reason: reason} }

func (p *Product) verify(c *fiber.Ctx) error {
	r, err := parseVerify(c.Body())
	if err != nil {
		return err
	}
	v, err := p.check(c.UserContext(), r)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

// credential is what the client claims: its key and scope, the signing time, the headers
// it signed and its signature.
type credential struct {
	accessKey, date, region, service string
	signedHeaders                    []string
	signature                        string
	at                               time.Time
	expires                          time.Duration // presigned only
}

func (p *Product) check(ctx context.Context, r signedRequest) (verdict, error) {
	cred, reason := parseCredential(r)
	if reason != "" {
		return invalid(reason), nil
	}
	now := p.clock.Now()
	if cred.region != p.region {
		return invalid("wrong region"), nil
	}
	if cred.service != "s3" {
		return invalid("wrong service"), nil
	}
	if cred.at.Sub(now) > maxClockSkew || (!r.presigned && now.Sub(cred.at) > maxClockSkew) {
		return invalid("clock skew over 15 minutes"), nil
	}
	if r.presigned && !now.Before(cred.at.Add(cred.expires)) {
		return invalid("presigned URL expired"), nil
	}
	k, err := p.lookup(ctx, cred.accessKey)
	if err != nil {
		return verdict{}, err
	}
	switch {
	case k == nil:
		return invalid("unknown access key"), nil
	case k.revoked:
		return invalid("access key revoked"), nil
	case k.expiresAt != nil && !now.Before(*k.expiresAt):
		return invalid("access key expired"), nil
	}
	want, reason, err := expectedSignature(ctx, r, cred, k.secret)
	if err != nil {
		return verdict{}, err
	}
	if reason != "" {
		return invalid(reason), nil
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(cred.signature)) != 1 {
		return invalid("signature does not match"), nil
	}
	return verdict{Valid: true, BadgeID: k.badgeID, ProjectID: k.projectID, Bucket: k.bucket, Role: k.role}, nil
}

// parseCredential reads the Authorization header, or for a presigned URL the X-Amz-*
// query parameters.
func parseCredential(r signedRequest) (credential, string) {
	var c credential
	var dateStr, scope, signed string
	if r.presigned {
		q, _ := url.ParseQuery(r.query)
		if q.Get("X-Amz-Algorithm") != algorithm {
			return c, "unsupported algorithm"
		}
		scope, signed, c.signature, dateStr = q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature"), q.Get("X-Amz-Date")
		secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
		if err != nil || secs < 1 || secs > maxPresignSecs {
			return c, "malformed X-Amz-Expires"
		}
		c.expires = time.Duration(secs) * time.Second
	} else {
		auth := r.headers["authorization"]
		rest, ok := strings.CutPrefix(auth, algorithm+" ")
		if !ok {
			return c, "unsupported algorithm"
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
		dateStr = r.headers["x-amz-date"]
	}
	parts := strings.Split(scope, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" || parts[0] == "" || signed == "" || c.signature == "" {
		return c, "malformed authorization"
	}
	c.accessKey, c.date, c.region, c.service = parts[0], parts[1], parts[2], parts[3]
	c.signedHeaders = strings.Split(signed, ";")
	t, err := time.Parse(amzDateLayout, dateStr)
	if err != nil {
		return c, "malformed X-Amz-Date"
	}
	if t.Format("20060102") != c.date {
		return c, "credential scope date does not match X-Amz-Date"
	}
	c.at = t
	return c, ""
}

// expectedSignature rebuilds the request from its parts, with exactly the headers the
// client signed, and has the SDK's signer sign it with the stored secret.
func expectedSignature(ctx context.Context, r signedRequest, c credential, secretKey string) (sig, reason string, err error) {
	host := r.headers["host"]
	rawQuery := r.query
	if r.presigned {
		q, _ := url.ParseQuery(r.query)
		q.Del("X-Amz-Signature")
		rawQuery = q.Encode()
	}
	u, err := url.Parse("http://" + host + r.path)
	if err != nil || u.Host != host {
		return "", "malformed path or host", nil
	}
	u.RawQuery = rawQuery
	req := &http.Request{Method: r.method, URL: u, Host: host, Header: http.Header{}}
	for _, name := range c.signedHeaders {
		v, ok := r.headers[name]
		switch {
		case name == "host":
		case !ok:
			return "", "signed header " + name + " is missing", nil
		case name == "content-length":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return "", "malformed content-length", nil
			}
			req.ContentLength = n
		default:
			req.Header.Set(name, v)
		}
	}
	creds := aws.Credentials{AccessKeyID: c.accessKey, SecretAccessKey: secretKey}
	if r.presigned {
		signed, _, err := signer.PresignHTTP(ctx, creds, req, r.payloadHash, c.service, c.region, c.at)
		if err != nil {
			return "", "", err
		}
		su, err := url.Parse(signed)
		if err != nil {
			return "", "", err
		}
		if su.Query().Get("X-Amz-SignedHeaders") != strings.Join(c.signedHeaders, ";") {
			return "", "signed headers do not match", nil
		}
		return su.Query().Get("X-Amz-Signature"), "", nil
	}
	if err := signer.SignHTTP(ctx, creds, req, r.payloadHash, c.service, c.region, c.at); err != nil {
		return "", "", err
	}
	auth := req.Header.Get("Authorization")
	if !strings.Contains(auth, "SignedHeaders="+strings.Join(c.signedHeaders, ";")+",") {
		return "", "signed headers do not match", nil
	}
	_, s, _ := strings.Cut(auth, "Signature=")
	return s, "", nil
}
