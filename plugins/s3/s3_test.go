package s3_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"go.uber.org/fx"

	minio "github.com/minio/minio-go/v7/pkg/signer"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/plugins/s3"
)

func TestMain(m *testing.M) { apptest.Main(m) }

type badge struct {
	ID, AccessKey, Secret, Bucket, Region, Endpoint, ProjectID string
}

func mint(t *testing.T, a *apptest.App, admin *apptest.Session, prj string, extra map[string]any) badge {
	t.Helper()
	body := map[string]any{"name": "storage", "product": "s3", "role": "developer"}
	for k, v := range extra {
		body[k] = v
	}
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: body, Header: admin.Bearer()}).Expect(t, 201, map[string]any{"auth": nil})
	s := got["s3"].(map[string]any)
	return badge{ID: got["badge"].(map[string]any)["id"].(string), AccessKey: s["accessKeyId"].(string), Secret: s["secretAccessKey"].(string),
		Bucket: s["bucket"].(string), Region: s["region"].(string), Endpoint: s["endpoint"].(string), ProjectID: prj}
}

// s3Signer signs as S3 clients do: aws-sdk-go-v2's v4 signer without double path escaping.
var s3Signer = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })

// parts turns a signed request into the verify body.
func parts(r *http.Request, payloadHash string) map[string]any {
	h := map[string]any{"host": r.Host}
	for k, v := range r.Header {
		h[strings.ToLower(k)] = v[0]
	}
	if r.ContentLength > 0 {
		h["content-length"] = strconv.FormatInt(r.ContentLength, 10)
	}
	return map[string]any{"method": r.Method, "path": r.URL.EscapedPath(), "query": r.URL.RawQuery, "headers": h, "payloadHash": payloadHash}
}

func signed(t *testing.T, b badge, method, target string, body string, at time.Time) (*http.Request, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.Endpoint+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	req.Header.Set("X-Amz-Meta-Owner", "ci")
	creds := aws.Credentials{AccessKeyID: b.AccessKey, SecretAccessKey: b.Secret}
	if err := s3Signer.SignHTTP(context.Background(), creds, req, hash, "s3", b.Region, at); err != nil {
		t.Fatal(err)
	}
	return req, hash
}

func verify(a *apptest.App, body any) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/service-badges/s3/verify", Body: body})
}

func setup(t *testing.T, st apptest.Store) (*apptest.App, *apptest.Session, string) {
	a := apptest.Start(t, st)
	admin := a.SignUp(t)
	return a, admin, a.CreateProject(t, admin)
}

func TestMintedCredentials(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		b := mint(t, a, admin, prj, nil)
		if !regexp.MustCompile(`^AKAC[A-Z0-9]{16}$`).MatchString(b.AccessKey) || len(b.Secret) != 40 {
			t.Fatalf("%+v", b)
		}
		if !regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`).MatchString(b.Bucket) || b.Region != "us-east-1" || b.Endpoint != "http://127.0.0.1:9000" {
			t.Fatalf("%+v", b)
		}
		if again := mint(t, a, admin, prj, nil); again.Bucket != b.Bucket || again.AccessKey == b.AccessKey {
			t.Fatal("bucket not stable per project, or access key reused")
		}
	})
}

func TestSignedRequestsVerify(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		b := mint(t, a, admin, prj, nil)
		now := a.Clock.Now()
		ok := map[string]any{"valid": true, "badgeId": b.ID, "projectId": prj, "bucket": b.Bucket, "role": "developer"}

		t.Run("GET object", func(t *testing.T) {
			req, hash := signed(t, b, http.MethodGet, "/"+b.Bucket+"/reports/2026/q3%20summary.pdf?versionId=3", "", now)
			verify(a, parts(req, hash)).Expect(t, 200, ok)
		})
		t.Run("PUT object with a payload hash", func(t *testing.T) {
			req, hash := signed(t, b, http.MethodPut, "/"+b.Bucket+"/upload.txt", "hello, bucket", now)
			verify(a, parts(req, hash)).Expect(t, 200, ok)
		})
		t.Run("presigned GET", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, b.Endpoint+"/"+b.Bucket+"/shared.png", nil)
			q := req.URL.Query()
			q.Set("X-Amz-Expires", "300")
			req.URL.RawQuery = q.Encode()
			u, _, err := s3Signer.PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: b.AccessKey, SecretAccessKey: b.Secret}, req, "UNSIGNED-PAYLOAD", "s3", b.Region, now)
			if err != nil {
				t.Fatal(err)
			}
			pu, _ := url.Parse(u)
			verify(a, map[string]any{"method": "GET", "path": pu.EscapedPath(), "query": pu.RawQuery, "headers": map[string]any{"host": pu.Host}}).Expect(t, 200, ok)

			t.Run("expired", func(t *testing.T) {
				a.Clock.Advance(301 * time.Second)
				defer a.Clock.Advance(-301 * time.Second)
				verify(a, map[string]any{"method": "GET", "path": pu.EscapedPath(), "query": pu.RawQuery, "headers": map[string]any{"host": pu.Host}}).
					Expect(t, 200, map[string]any{"valid": false, "reason": "presign_expired"})
			})
			t.Run("tampered path", func(t *testing.T) {
				verify(a, map[string]any{"method": "GET", "path": "/" + b.Bucket + "/other.png", "query": pu.RawQuery, "headers": map[string]any{"host": pu.Host}}).
					Expect(t, 200, map[string]any{"valid": false, "reason": "bad_signature"})
			})
		})
	})
}

func TestTamperedRequestsFail(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		b := mint(t, a, admin, prj, nil)
		now := a.Clock.Now()
		req, hash := signed(t, b, http.MethodPut, "/"+b.Bucket+"/upload.txt", "hello", now)
		base := parts(req, hash)
		clone := func() map[string]any {
			c := map[string]any{}
			for k, v := range base {
				c[k] = v
			}
			h := map[string]any{}
			for k, v := range base["headers"].(map[string]any) {
				h[k] = v
			}
			c["headers"] = h
			return c
		}
		bad := map[string]any{"valid": false, "reason": "bad_signature"}
		cases := map[string]func(m map[string]any){
			"method":          func(m map[string]any) { m["method"] = "DELETE" },
			"path":            func(m map[string]any) { m["path"] = "/" + b.Bucket + "/other.txt" },
			"query":           func(m map[string]any) { m["query"] = "acl=" },
			"payload hash":    func(m map[string]any) { m["payloadHash"] = strings.Repeat("0", 64) },
			"a signed header": func(m map[string]any) { m["headers"].(map[string]any)["x-amz-meta-owner"] = "mallory" },
			"host":            func(m map[string]any) { m["headers"].(map[string]any)["host"] = "evil.example.com" },
			"signature": func(m map[string]any) {
				h := m["headers"].(map[string]any)
				auth := h["authorization"].(string)
				h["authorization"] = auth[:len(auth)-1] + map[bool]string{true: "0", false: "1"}[auth[len(auth)-1] != '0']
			},
		}
		verify(a, base).Expect(t, 200, map[string]any{"valid": true})
		for name, edit := range cases {
			t.Run("tampered "+name, func(t *testing.T) {
				m := clone()
				edit(m)
				verify(a, m).Expect(t, 200, bad)
			})
		}
		t.Run("tampered date", func(t *testing.T) {
			m := clone()
			m["headers"].(map[string]any)["x-amz-date"] = now.Add(time.Minute).UTC().Format("20060102T150405Z")
			got := verify(a, m).Expect(t, 200, map[string]any{"valid": false})
			if got["reason"] == "" {
				t.Fatal("no reason")
			}
		})
		t.Run("a signed header missing", func(t *testing.T) {
			m := clone()
			delete(m["headers"].(map[string]any), "x-amz-meta-owner")
			verify(a, m).Expect(t, 200, map[string]any{"valid": false, "reason": "malformed"})
		})
		t.Run("clock skew over 15 minutes", func(t *testing.T) {
			old, h := signed(t, b, http.MethodGet, "/"+b.Bucket+"/x", "", now.Add(-16*time.Minute))
			verify(a, parts(old, h)).Expect(t, 200, map[string]any{"valid": false, "reason": "clock_skew"})
			fine, h2 := signed(t, b, http.MethodGet, "/"+b.Bucket+"/x", "", now.Add(-14*time.Minute))
			verify(a, parts(fine, h2)).Expect(t, 200, map[string]any{"valid": true})
		})
		t.Run("unknown access key", func(t *testing.T) {
			ghost := b
			ghost.AccessKey = "AKACAAAAAAAAAAAAAAAA"
			r, h := signed(t, ghost, http.MethodGet, "/"+b.Bucket+"/x", "", now)
			verify(a, parts(r, h)).Expect(t, 200, map[string]any{"valid": false, "reason": "invalid_access_key"})
		})
		t.Run("wrong secret", func(t *testing.T) {
			forged := b
			forged.Secret = strings.Repeat("x", 40)
			r, h := signed(t, forged, http.MethodGet, "/"+b.Bucket+"/x", "", now)
			verify(a, parts(r, h)).Expect(t, 200, bad)
		})
	})
}

func TestRevokedAndExpiredKeys(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		b := mint(t, a, admin, prj, nil)
		r, h := signed(t, b, http.MethodGet, "/"+b.Bucket+"/x", "", a.Clock.Now())
		verify(a, parts(r, h)).Expect(t, 200, map[string]any{"valid": true}) // cached as valid
		a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/service-badges/" + b.ID, Header: admin.Bearer()}).Expect(t, 200, nil)
		verify(a, parts(r, h)).Expect(t, 200, map[string]any{"valid": false, "reason": "invalid_access_key"})

		e := mint(t, a, admin, prj, map[string]any{"expiresInDays": 1})
		a.Clock.Advance(24 * time.Hour)
		r2, h2 := signed(t, e, http.MethodGet, "/"+e.Bucket+"/x", "", a.Clock.Now())
		verify(a, parts(r2, h2)).Expect(t, 200, map[string]any{"valid": false, "reason": "invalid_access_key"})
	})
}

func TestMalformedBody(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite:"+t.TempDir()+"/a.db")
	for name, body := range map[string]any{
		"no body":             nil,
		"not JSON":            "nope",
		"no headers":          map[string]any{"method": "GET", "path": "/b/k"},
		"headers not strings": map[string]any{"method": "GET", "path": "/b/k", "headers": map[string]any{"host": 1}},
		"no authorization":    map[string]any{"method": "GET", "path": "/b/k", "headers": map[string]any{"host": "h", "x-amz-date": "20260101T000000Z"}},
		"path without slash":  map[string]any{"method": "GET", "path": "b/k", "headers": map[string]any{"host": "h", "authorization": "x", "x-amz-date": "x"}},
		"bad payload hash":    map[string]any{"method": "GET", "path": "/b/k", "payloadHash": "abc", "headers": map[string]any{"host": "h", "authorization": "x", "x-amz-date": "x"}},
		"lower-case method":   map[string]any{"method": "get", "path": "/b/k", "headers": map[string]any{"host": "h", "authorization": "x", "x-amz-date": "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			verify(a, body).Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
	}
	t.Run("a garbled Authorization is a verdict, not a 400", func(t *testing.T) {
		verify(a, map[string]any{"method": "GET", "path": "/b/k", "headers": map[string]any{"host": "h", "authorization": "AWS4-HMAC-SHA256 nonsense", "x-amz-date": "20260101T000000Z"}}).
			Expect(t, 200, map[string]any{"valid": false, "reason": "malformed"})
	})
}

func TestSecretKeyNeverStoredInPlainText(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		b := mint(t, a, admin, prj, nil)
		r, h := signed(t, b, http.MethodGet, "/"+b.Bucket+"/x", "", a.Clock.Now())
		verify(a, parts(r, h)).Expect(t, 200, map[string]any{"valid": true})
		db, logs := a.DumpDB(t), a.Logs.String()
		if !strings.Contains(db, b.AccessKey) {
			t.Fatal("scan sees nothing")
		}
		if strings.Contains(db, b.Secret) || strings.Contains(logs, b.Secret) {
			t.Fatal("secret access key stored or logged in plain text")
		}
	})
}

// A revoke on one replica reaches another that had the key cached, within 1 s.
func TestRevokeReachesOtherReplicas(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("needs PostgreSQL")
	}
	pg := apptest.Stores(t)[1]
	var busB *invalidation.PG
	a, admin, prj := setup(t, pg)
	other := apptest.Start(t, pg, apptest.WithFx(fx.Populate(&busB)))
	<-busB.Listening()
	b := mint(t, a, admin, prj, nil)
	r, h := signed(t, b, http.MethodGet, "/"+b.Bucket+"/x", "", other.Clock.Now())
	verify(other, parts(r, h)).Expect(t, 200, map[string]any{"valid": true})
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/service-badges/" + b.ID, Header: admin.Bearer()}).Expect(t, 200, nil)
	start := time.Now()
	for verify(other, parts(r, h)).JSON(t)["valid"] == true {
		if time.Since(start) > time.Second {
			t.Fatal("the other replica still accepts the key 1 s after the revoke")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// minioParts turns a request signed by minio-go into the verify body: every header the
// client sends, as a gateway would forward them.
func minioParts(r *http.Request) map[string]any {
	h := map[string]any{"host": r.URL.Host}
	for k, v := range r.Header {
		h[strings.ToLower(k)] = v[0]
	}
	return map[string]any{"method": r.Method, "path": r.URL.EscapedPath(), "query": r.URL.RawQuery, "headers": h}
}

// Requests signed by a second, independent SigV4 implementation (minio-go's signer), in
// the shapes that stock clients send and aws-sdk-go-v2's signer cannot reproduce.
func TestRequestsFromOtherClients(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		b := mint(t, a, admin, prj, nil)
		ok := map[string]any{"valid": true, "badgeId": b.ID, "bucket": b.Bucket}

		t.Run("an empty PutObject that signs content-length: 0", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPut, b.Endpoint+"/"+b.Bucket+"/folder/", nil)
			req.Header.Set("Content-Length", "0") // what the AWS JS SDK, smithy and botocore sign
			empty := sha256.Sum256(nil)
			req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(empty[:]))
			signed := minio.SignV4(*req, b.AccessKey, b.Secret, "", b.Region)
			if !strings.Contains(signed.Header.Get("Authorization"), "content-length") {
				t.Fatalf("content-length not signed: %s", signed.Header.Get("Authorization"))
			}
			verify(a, minioParts(signed)).Expect(t, 200, ok)
		})
		t.Run("a streaming upload signed chunk by chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD)", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPut, b.Endpoint+"/"+b.Bucket+"/big.bin", strings.NewReader("chunked data"))
			signed := minio.StreamingSignV4(req, b.AccessKey, b.Secret, "", b.Region, 12, time.Now().UTC(), nil)
			if signed.Header.Get("X-Amz-Content-Sha256") != "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" {
				t.Fatal(signed.Header)
			}
			verify(a, minioParts(signed)).Expect(t, 200, ok)
			body := minioParts(signed)
			body["payloadHash"] = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
			verify(a, body).Expect(t, 200, ok)
		})
		t.Run("every payload hash S3 accepts is accepted", func(t *testing.T) {
			for _, ph := range []string{"STREAMING-UNSIGNED-PAYLOAD-TRAILER", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
				"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER", "UNSIGNED-PAYLOAD"} {
				req, _ := http.NewRequest(http.MethodPut, b.Endpoint+"/"+b.Bucket+"/t.bin", nil)
				req.Header.Set("X-Amz-Content-Sha256", ph)
				if err := s3Signer.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: b.AccessKey, SecretAccessKey: b.Secret}, req, ph, "s3", b.Region, a.Clock.Now()); err != nil {
					t.Fatal(err)
				}
				verify(a, parts(req, ph)).Expect(t, 200, ok)
			}
		})
	})
}

// The signed request must address the key's bucket, path style or virtual-hosted style.
func TestBucketIsBound(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite:"+t.TempDir()+"/a.db", apptest.WithConfig(func(c *config.Config) {
		c.Plugins = append(c.Plugins, &s3.Settings{Endpoint: "https://s3.example.test", Region: "us-east-1"})
	}))
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	b := mint(t, a, admin, prj, nil)
	other := "authcore-prj-someone-else"
	now := a.Clock.Now()
	check := func(host, path string) *apptest.Response {
		req, hash := signed(t, b, http.MethodGet, path, "", now)
		req.Host = host
		req.URL.Host = host
		req.Header.Del("Authorization")
		if err := s3Signer.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: b.AccessKey, SecretAccessKey: b.Secret}, req, hash, "s3", b.Region, now); err != nil {
			t.Fatal(err)
		}
		return verify(a, parts(req, hash))
	}
	check("s3.example.test", "/"+b.Bucket+"/k").Expect(t, 200, map[string]any{"valid": true})
	check("s3.example.test", "/"+other+"/k").Expect(t, 200, map[string]any{"valid": false, "reason": "bucket_mismatch"})
	check(b.Bucket+".s3.example.test", "/k").Expect(t, 200, map[string]any{"valid": true})
	check(other+".s3.example.test", "/"+b.Bucket+"/k").Expect(t, 200, map[string]any{"valid": false, "reason": "bucket_mismatch"})
	check("s3.example.test", "/").Expect(t, 200, map[string]any{"valid": false, "reason": "bucket_mismatch"})

	m := string(a.Get("/metrics").Body)
	for _, want := range []string{`authcore_verifications_total{kind="s3_sigv4",result="ok"} 2`, `authcore_verifications_total{kind="s3_sigv4",result="bucket_mismatch"} 3`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// SPEC §9a: a path with dot-segments is malformed (S3 would resolve /A/../B/key into
// bucket B while the bucket check saw A), and x-amz-copy-source must name the key's bucket.
func TestDotSegmentsAndCopySource(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		b := mint(t, a, admin, prj, nil)
		other := "authcore-prj-someone-else"
		now := a.Clock.Now()
		check := func(path string, header map[string]string) *apptest.Response {
			req, err := http.NewRequest(http.MethodPut, b.Endpoint+"/placeholder", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = path // sent as written: no cleaning of dot-segments
			req.Header.Set("X-Amz-Content-Sha256", emptyHash)
			for k, v := range header {
				req.Header.Set(k, v)
			}
			if err := s3Signer.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: b.AccessKey, SecretAccessKey: b.Secret}, req, emptyHash, "s3", b.Region, now); err != nil {
				t.Fatal(err)
			}
			body := parts(req, emptyHash)
			body["path"] = path
			return verify(a, body)
		}
		malformed := map[string]any{"valid": false, "reason": "malformed"}
		for _, p := range []string{"/" + b.Bucket + "/../" + other + "/key", "/" + b.Bucket + "/%2e%2E/" + other + "/key",
			"/" + b.Bucket + "/./key", "/" + b.Bucket + "/%252e%252e/" + other + "/key"} {
			check(p, nil).Expect(t, 200, malformed)
		}
		check("/"+b.Bucket+"/a..b/.key", nil).Expect(t, 200, map[string]any{"valid": true}) // dots inside names are fine
		copyFrom := func(src string) *apptest.Response {
			return check("/"+b.Bucket+"/copy", map[string]string{"X-Amz-Copy-Source": src})
		}
		copyFrom(b.Bucket+"/original").Expect(t, 200, map[string]any{"valid": true})
		copyFrom("/"+b.Bucket+"/original?versionId=3").Expect(t, 200, map[string]any{"valid": true})
		copyFrom(other+"/their-secret").Expect(t, 200, map[string]any{"valid": false, "reason": "bucket_mismatch"})
		copyFrom("/"+url.PathEscape(other)+"/x").Expect(t, 200, map[string]any{"valid": false, "reason": "bucket_mismatch"})
		copyFrom("/"+b.Bucket+"/../"+other+"/x").Expect(t, 200, malformed)
	})
}
