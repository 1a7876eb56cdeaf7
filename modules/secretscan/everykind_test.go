package secretscan_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// secrets mints one live secret of every kind a project can hold, and says how to tell it
// still works.
type secrets struct {
	a                                     *apptest.App
	prj                                   string
	admin                                 *apptest.Session
	agent, badge, clientID, clientSecret  string
	refresh, endUserAccess, accessKey     string
	s3Secret, s3Bucket, exchanged, client string
	app                                   apptest.ConnectedApp // a grant of SPEC §16
}

func mintAll(t *testing.T, a *apptest.App, admin *apptest.Session, prj string) *secrets {
	do := func(path string, body any, status int) map[string]any {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: admin.Bearer()}).Expect(t, status, nil)
	}
	s := &secrets{a: a, prj: prj, admin: admin}
	s.agent = do("/v1/auth-core/projects/"+prj+"/ai/agents", map[string]any{}, 200)["plaintext"].(string)
	s.badge = do("/v1/projects/"+prj+"/service-badges", map[string]any{"name": "d", "product": "db"}, 201)["plaintext"].(string)
	au := do("/v1/projects/"+prj+"/service-badges", map[string]any{"name": "m2m", "product": "auth"}, 201)["auth"].(map[string]any)
	s.clientID, s.clientSecret = au["clientId"].(string), au["clientSecret"].(string)
	s3 := do("/v1/projects/"+prj+"/service-badges", map[string]any{"name": "files", "product": "s3"}, 201)["s3"].(map[string]any)
	s.accessKey, s.s3Secret, s.s3Bucket = s3["accessKeyId"].(string), s3["secretAccessKey"].(string), s3["bucket"].(string)
	end := a.SignUpIn(t, prj)
	s.refresh, s.endUserAccess = end.RefreshToken, end.AccessToken
	s.exchanged = s.token(t, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {s.agent},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}})
	rs := do("/v1/projects/"+prj+"/service-badges", map[string]any{"name": "rs", "product": "auth"}, 201)["auth"].(map[string]any)
	s.client = rs["clientId"].(string) + ":" + rs["clientSecret"].(string)
	s.app = a.ConnectApp(t, admin, prj, "")
	return s
}

func (s *secrets) form(path string, f url.Values, header map[string]string) *apptest.Response {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range header {
		h[k] = v
	}
	return s.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: f.Encode(), Header: h})
}

func (s *secrets) token(t *testing.T, f url.Values) string {
	return s.form("/v1/oauth/token", f, nil).Expect(t, 200, nil)["access_token"].(string)
}

// introspect asks as the project's resource-server client whether token is active.
func (s *secrets) active(t *testing.T, token string) bool {
	id, sec, _ := cut(s.client)
	r := s.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/introspect", Body: url.Values{"token": {token}, "client_id": {id}, "client_secret": {sec}}.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)
	return r["active"] == true
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// works reports, per kind, whether each secret still does what it is for.
func (s *secrets) works(t *testing.T) map[string]bool {
	cc := s.form("/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {s.clientID}, "client_secret": {s.clientSecret}}, nil)
	refresh := s.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": s.refresh}})
	if refresh.Status == 200 { // it rotated: follow it, so the next round tests the live one
		s.refresh = refresh.JSON(t)["session"].(map[string]any)["refreshToken"].(string)
	}
	// A request signed as S3 clients sign them (aws-sdk-go-v2), checked by s3/verify.
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:9000/"+s.s3Bucket+"/k", nil)
	req.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	if err := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }).SignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: s.accessKey, SecretAccessKey: s.s3Secret}, req, emptySHA256, "s3", "us-east-1", s.a.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"host": req.Host}
	for k, v := range req.Header {
		headers[strings.ToLower(k)] = v[0]
	}
	verify := s.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/service-badges/s3/verify", Body: map[string]any{
		"method": "GET", "path": req.URL.EscapedPath(), "query": "", "headers": headers, "payloadHash": emptySHA256}})
	valid, _ := verify.JSON(t)["valid"].(bool)
	return map[string]bool{
		"agent":         s.a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+s.agent).Status == 200,
		"badge":         s.a.Get("/v1/service-badges/me", "Authorization", "Bearer "+s.badge).Status == 200,
		"client secret": cc.Status == 200,
		"refresh":       refresh.Status == 200,
		"s3 key":        valid,
		"exchanged":     s.active(t, s.exchanged),
		"grant refresh": s.active(t, s.app.RefreshToken),
		"grant access":  s.active(t, s.app.AccessToken),
	}
}

func expectAll(t *testing.T, got map[string]bool, want bool) {
	t.Helper()
	for k, v := range got {
		if v != want {
			t.Errorf("%s works: %v, want %v", k, v, want)
		}
	}
}

// SPEC §9a: every kind of secret is revocable by a signed leak report (the at+jwt, which
// no scanner can find, by RFC 7009 — see below).
func TestLeakReportsRevokeEveryKind(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		github, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		path := keys(t, map[string]*ecdsa.PrivateKey{"gh": github})
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.SecretScanningKeys = path }))
		admin := a.SignUp(t)
		s := mintAll(t, a, admin, a.CreateProject(t, admin))
		expectAll(t, s.works(t), true)
		var report []map[string]string
		for _, tok := range []string{s.agent, s.badge, s.clientSecret, s.refresh, s.accessKey, s.app.RefreshToken} {
			report = append(report, map[string]string{"token": tok, "type": "authcore", "url": "https://github.com/o/r", "source": "content"})
		}
		body, _ := json.Marshal(report)
		var labels []map[string]string
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/secret-scanning/report", Body: body, Header: map[string]string{
			"Content-Type": "application/json", "Github-Public-Key-Identifier": "gh", "Github-Public-Key-Signature": sign(t, github, body)}}).Decode(t, &labels)
		for i, l := range labels {
			if l["label"] != "true_positive" {
				t.Errorf("%s: %s", report[i]["token"][:8], l["label"])
			}
		}
		got := s.works(t)
		delete(got, "exchanged") // its agent token was revoked too, so it is inactive anyway
		expectAll(t, got, false)
	})
}

// SPEC §9a: RFC 7009 revokes every kind too, the at+jwt access token by its jti — at once,
// on every replica.
func TestRFC7009RevokesEveryKind(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		dbURL := st.URL(t)
		a := apptest.StartURL(t, st.Name, dbURL)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		s := mintAll(t, a, admin, prj)
		expectAll(t, s.works(t), true)
		cc := s.token(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {s.clientID}, "client_secret": {s.clientSecret}})
		other := a
		if st.Name == "postgres" {
			other = apptest.StartURL(t, st.Name, dbURL)
		}
		o := *s
		o.a = other
		if !o.active(t, cc) || !o.active(t, s.exchanged) || !o.active(t, s.app.AccessToken) { // cached as active on the other replica
			t.Fatal("not active before the revoke")
		}
		// The grant's access token dies with its grant, revoked through its refresh token.
		for _, tok := range []string{s.exchanged, cc, s.app.RefreshToken} {
			s.form("/v1/oauth/revoke", url.Values{"token": {tok}}, nil).Expect(t, 200, map[string]any{})
		}
		if s.active(t, cc) || s.active(t, s.exchanged) || s.active(t, s.app.AccessToken) {
			t.Fatal("a revoked access token is still active on the replica that revoked it")
		}
		// Every other replica within 1 s (SPEC §1): the NOTIFY commits with the revoke.
		deadline := time.Now().Add(time.Second)
		for o.active(t, cc) || o.active(t, s.exchanged) || o.active(t, s.app.AccessToken) {
			if time.Now().After(deadline) {
				t.Fatal("a revoked access token is still active on the other replica 1 s later")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !s.works(t)["agent"] {
			t.Fatal("revoking an exchanged token revoked its agent token")
		}
		for _, tok := range []string{s.agent, s.badge, s.clientSecret, s.refresh, s.accessKey} {
			s.form("/v1/oauth/revoke", url.Values{"token": {tok}}, nil).Expect(t, 200, map[string]any{})
		}
		got := s.works(t)
		delete(got, "exchanged")
		expectAll(t, got, false)
	})
}
