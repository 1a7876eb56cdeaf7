package main

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// Mint every kind of secret the service hands out, use each once, then scan a dump of
// every table and every log line: no plaintext secret may appear (SPEC §9).
func TestNoSecretInStoreOrLogs(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		in := testkit.StartInbox(t)
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL }))
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		secrets := map[string]string{"password": admin.Password, "session access token": admin.AccessToken, "refresh token": admin.RefreshToken}

		// A refresh rotates the refresh token: both the old and the new one are secrets.
		r := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": admin.RefreshToken}}).Expect(t, 200, nil)
		sess := r["session"].(map[string]any)
		secrets["rotated refresh token"] = sess["refreshToken"].(string)
		secrets["refreshed access token"] = sess["accessToken"].(string)
		bearer := map[string]string{"Authorization": "Bearer " + secrets["refreshed access token"]}

		agent := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{"agentName": "scan"}, Header: bearer}).Expect(t, 200, nil)
		secrets["agent token"] = agent["plaintext"].(string)
		a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+secrets["agent token"]).Expect(t, 200, nil)

		badge := func(product string) map[string]any {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
				Body: map[string]any{"name": product, "product": product, "role": "developer"}, Header: bearer}).Expect(t, 201, nil)
		}
		secrets["db badge"] = badge("db")["plaintext"].(string)
		s3 := badge("s3")
		secrets["s3 badge"] = s3["plaintext"].(string)
		secrets["s3 secret access key"] = s3["s3"].(map[string]any)["secretAccessKey"].(string)
		auth := badge("auth")
		secrets["auth badge"] = auth["plaintext"].(string)
		creds := auth["auth"].(map[string]any)
		secrets["client secret"] = creds["clientSecret"].(string)
		a.Get("/v1/service-badges/me", "Authorization", "Bearer "+secrets["db badge"]).Expect(t, 200, nil)

		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {creds["clientId"].(string)}, "client_secret": {secrets["client secret"]}}
		tok := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)
		secrets["OAuth access token"] = tok["access_token"].(string)

		// A project invitation's mailed link (SPEC §9b).
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/invitations",
			Body: map[string]any{"email": apptest.UniqueEmail(t), "role": "viewer"}, Header: bearer}).Expect(t, 201, nil)
		secrets["invitation link"] = regexp.MustCompile(`ac_inv_[0-9A-Za-z]{38}`).FindString(in.Wait(t, 1)[0].Text)

		// An application connected by the authorization code flow (SPEC §16), refreshed once.
		app := a.ConnectApp(t, admin, prj, "")
		secrets["authorization code"], secrets["consent CSRF token"] = app.Code, app.CSRF
		secrets["grant access token"], secrets["grant refresh token"] = app.AccessToken, app.RefreshToken
		rotated := a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {app.RefreshToken}}, nil).Expect(t, 200, nil)
		secrets["rotated grant refresh token"] = rotated["refresh_token"].(string)

		// Second factors (SPEC §17): the TOTP app's shared secret (sealed), its recovery codes
		// and a sign-in's mfaToken (digests), one code of each used.
		pending := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Header: bearer}).Expect(t, 201, nil)
		secrets["TOTP secret"] = pending["secret"].(string)
		confirmed := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm",
			Body: map[string]any{"code": totpCode(t, secrets["TOTP secret"], a.Clock.Now())}, Header: bearer}).Expect(t, 200, nil)
		for i, c := range confirmed["recoveryCodes"].([]any) {
			secrets[fmt.Sprintf("recovery code %d", i)] = c.(string)
			secrets[fmt.Sprintf("recovery code %d as typed", i)] = strings.ReplaceAll(c.(string), "-", "")
		}
		step := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": admin.Email, "password": admin.Password}}).
			Expect(t, 200, map[string]any{"mfaRequired": true})
		secrets["mfaToken"] = step["mfaToken"].(string)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/verify",
			Body: map[string]any{"mfaToken": secrets["mfaToken"], "recoveryCode": secrets["recovery code 0"]}}).Expect(t, 200, nil)

		// Sign-in (SPEC §20): a provider's client secret (sealed) and a mailed sign-in link's
		// token (a digest), the link used.
		secrets["sign-in provider client secret"] = "provider-client-secret-" + admin.UserID
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/auth/providers", Header: bearer,
			Body: map[string]any{"preset": "gitlab", "clientId": "scan", "clientSecret": secrets["sign-in provider client secret"]}}).Expect(t, 201, nil)
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/auth/methods", Header: bearer,
			Body: map[string]any{"password": true, "emailLink": true}}).Expect(t, 200, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin-request", Body: map[string]any{"email": "mailed@example.com", "tenantId": prj}}).Expect(t, 202, nil)
		link := regexp.MustCompile(`ac_esl_[A-Za-z0-9]+`).FindString(in.Wait(t, 2)[1].Text)
		secrets["mailed sign-in link"] = link
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin", Body: map[string]any{"token": link}}).Expect(t, 200, nil)

		// The store as it stands, then every line up to and including shutdown.
		dump := a.DumpDB(t)
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}
		logs := a.Logs.String()
		if !strings.Contains(dump, admin.Email) || !strings.Contains(logs, "/v1/oauth/token") {
			t.Fatal("the scan sees nothing: the dump or the logs are empty")
		}
		for name, s := range secrets {
			probes := []string{s}
			if parts := strings.Split(s, "."); len(parts) == 3 { // a JWT: its signature alone is secret too
				probes = append(probes, parts[2])
			}
			for _, p := range probes {
				if strings.Contains(dump, p) {
					t.Errorf("the store holds the %s in plain text", name)
				}
				if strings.Contains(logs, p) {
					t.Errorf("a log line holds the %s", name)
				}
			}
		}
	})
}
