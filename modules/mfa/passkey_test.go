package mfa_test

import (
	"encoding/json"
	"net"
	"slices"
	"testing"

	"github.com/descope/virtualwebauthn"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// authenticator is a software authenticator (descope/virtualwebauthn) holding one passkey
// of one user: it signs whatever flags the test asks for, as an attacker's own would,
// where a browser would refuse to send an assertion that skipped user verification.
type authenticator struct {
	rp   virtualwebauthn.RelyingParty
	auth virtualwebauthn.Authenticator
	cred virtualwebauthn.Credential
}

// startWithPasskeys boots the app on a public URL whose host WebAuthn accepts as a
// relying party id (localhost; an IP address turns passkeys off).
func startWithPasskeys(t *testing.T, st apptest.Store) *apptest.App {
	return apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) {
		_, port, _ := net.SplitHostPort(c.Addr)
		c.PublicURL = "http://localhost:" + port
	}))
}

// enrolPasskey registers a passkey for s through the API and returns its authenticator.
func enrolPasskey(t *testing.T, a *apptest.App, s *apptest.Session) *authenticator {
	t.Helper()
	k := &authenticator{
		rp:   virtualwebauthn.RelyingParty{ID: "localhost", Name: "authcore", Origin: a.Config.PublicURL},
		auth: virtualwebauthn.NewAuthenticatorWithOptions(virtualwebauthn.AuthenticatorOptions{UserHandle: []byte(s.UserID)}),
		cred: testkit.PasskeyCredential(),
	}
	begin := post(a, "/v1/auth-core/mfa/passkeys/register/begin", map[string]any{"name": "key"}, s.Bearer())
	begin.Expect(t, 200, nil)
	opts, err := virtualwebauthn.ParseAttestationOptions(string(begin.Body))
	if err != nil {
		t.Fatal(err)
	}
	created := virtualwebauthn.CreateAttestationResponse(k.rp, k.auth, k.cred, *opts)
	post(a, "/v1/auth-core/mfa/passkeys/register/finish", []byte(created), s.Bearer()).Expect(t, 201, nil)
	k.auth.AddCredential(k.cred)
	return k
}

// sign answers options (a begin's body) with an assertion, with or without the
// authenticator's user-verified flag.
func (k *authenticator) sign(t *testing.T, options []byte, verified bool) json.RawMessage {
	t.Helper()
	opts, err := virtualwebauthn.ParseAssertionOptions(string(options))
	if err != nil {
		t.Fatal(err)
	}
	auth := k.auth
	auth.Options.UserNotVerified = !verified
	return json.RawMessage(virtualwebauthn.CreateAssertionResponse(k.rp, auth, k.cred, *opts))
}

// begin starts a ceremony with body and answers the options.
func begin(t *testing.T, a *apptest.App, body any) []byte {
	t.Helper()
	r := post(a, "/v1/auth-core/mfa/passkeys/signin/begin", body, nil)
	r.Expect(t, 200, nil)
	return r.Body
}

func userVerification(t *testing.T, options []byte) string {
	t.Helper()
	var o struct {
		PublicKey struct {
			UserVerification string `json:"userVerification"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		t.Fatal(err)
	}
	return o.PublicKey.UserVerification
}

// SPEC §9b: a passkey alone, or a step-up, needs user verification; after a password it
// may be the second factor on presence alone. The attack: an authenticator that proves
// presence only (a touch, no PIN or biometric) signs an assertion without the UV flag.
func TestPasskeyUserVerification(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := startWithPasskeys(t, st)
		u := a.SignUp(t)
		key := enrolPasskey(t, a, u)
		wrong := map[string]any{"code": "invalid_second_factor"}

		// Sign-in by passkey alone.
		opts := begin(t, a, nil)
		if uv := userVerification(t, opts); uv != "required" {
			t.Fatalf("passwordless options ask userVerification %q", uv)
		}
		post(a, "/v1/auth-core/mfa/passkeys/signin/finish", map[string]any{"credential": key.sign(t, opts, false)}, nil).Expect(t, 401, wrong)
		// The ceremony is spent by the refused attempt; a verified assertion on a new one signs in.
		done := post(a, "/v1/auth-core/mfa/passkeys/signin/finish", map[string]any{"credential": key.sign(t, begin(t, a, nil), true)}, nil).Expect(t, 200, nil)
		if claims := a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+accessToken(t, done)).Expect(t, 200, nil)["accessTokenPayload"].(map[string]any); !slices.Equal(toStrings(claims["amr"]), []string{"hwk"}) {
			t.Fatalf("amr of a passkey sign-in: %v", claims["amr"])
		}

		// Step-up.
		post(a, "/v1/auth-core/mfa/step-up", map[string]any{"assertion": key.sign(t, begin(t, a, nil), false)}, u.Bearer()).Expect(t, 401, wrong)
		post(a, "/v1/auth-core/mfa/step-up", map[string]any{"assertion": key.sign(t, begin(t, a, nil), true)}, u.Bearer()).Expect(t, 200, nil)

		// The second factor after the password: presence is enough.
		token := signIn(t, a, u, "")["mfaToken"].(string)
		second := begin(t, a, map[string]any{"mfaToken": token})
		if uv := userVerification(t, second); uv != "preferred" {
			t.Fatalf("second-factor options ask userVerification %q", uv)
		}
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "assertion": key.sign(t, second, false)}, nil).Expect(t, 200, nil)

		// A second-factor ceremony, which did not require verification, is no way around it:
		// neither a passkey sign-in nor a step-up takes its unverified assertion.
		token = signIn(t, a, u, "")["mfaToken"].(string)
		post(a, "/v1/auth-core/mfa/passkeys/signin/finish", map[string]any{"credential": key.sign(t, begin(t, a, map[string]any{"mfaToken": token}), false)}, nil).Expect(t, 401, wrong)
		post(a, "/v1/auth-core/mfa/step-up", map[string]any{"assertion": key.sign(t, begin(t, a, map[string]any{"mfaToken": token}), false)}, u.Bearer()).Expect(t, 401, wrong)
		// Nor does an mfaToken that is not one.
		post(a, "/v1/auth-core/mfa/passkeys/signin/begin", map[string]any{"mfaToken": "ac_mft_nope"}, nil).Expect(t, 401, map[string]any{"code": "invalid_mfa_token"})

		// Audited in the dashboard tenant's trail (SPEC §28): the passkey alone as a sign-in,
		// after a password as a second factor; a refused assertion proved nobody, so it is
		// no one's failure.
		for action, want := range map[string]int{"user.signin": 1, "user.signin_second_factor": 1, "user.signin_failed": 0} {
			evs := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID("public"), auditevent.Action(action)).AllX(t.Context())
			n := 0
			for _, e := range evs {
				if e.Metadata["userId"] == u.UserID && e.Metadata["method"] == "passkey" {
					n++
				}
			}
			if n != want {
				t.Errorf("%d %s events by passkey, want %d", n, action, want)
			}
		}
	})
}

// SPEC §9b: passkeys/signin/begin answers one shape whoever it names: discoverable options
// without allowCredentials, so it tells neither whether an account exists nor whether it
// has passkeys, nor their ids.
func TestPasskeyBeginRevealsNoAccount(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := startWithPasskeys(t, st)
		withKey, without := a.SignUp(t), a.SignUp(t)
		enrolPasskey(t, a, withKey)

		shape := func(body any) string {
			var m map[string]any
			if err := json.Unmarshal(begin(t, a, body), &m); err != nil {
				t.Fatal(err)
			}
			pk := m["publicKey"].(map[string]any)
			if _, ok := pk["allowCredentials"]; ok {
				t.Fatalf("options for %v list credentials: %v", body, pk)
			}
			if c, _ := pk["challenge"].(string); len(c) < 22 {
				t.Fatalf("no challenge in %v", pk)
			}
			delete(pk, "challenge") // random each time, as the challenge id is
			delete(m, "challengeId")
			b, _ := json.Marshal(m)
			return string(b)
		}
		want := shape(nil)
		for name, body := range map[string]any{
			"an email with passkeys":    map[string]any{"email": withKey.Email},
			"an email without passkeys": map[string]any{"email": without.Email},
			"an unknown email":          map[string]any{"email": apptest.UniqueEmail(t)},
			"another tenant":            map[string]any{"email": withKey.Email, "tenantId": "public"},
			"an empty object":           map[string]any{},
		} {
			if got := shape(body); got != want {
				t.Errorf("%s: options %s, want %s", name, got, want)
			}
		}
		// Bad input is a clear 400 and starts nothing.
		for name, body := range map[string]any{
			"not JSON":           "{",
			"email a number":     map[string]any{"email": 1},
			"mfaToken a number":  map[string]any{"mfaToken": 1},
			"mfaToken empty":     map[string]any{"mfaToken": ""},
			"tenantId a boolean": map[string]any{"tenantId": true},
		} {
			t.Run(name, func(t *testing.T) {
				post(a, "/v1/auth-core/mfa/passkeys/signin/begin", body, nil).Expect(t, 400, map[string]any{"code": "validation_failed"})
			})
		}
	})
}
