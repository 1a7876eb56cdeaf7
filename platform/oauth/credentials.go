package oauth

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
)

// Credentials are what a request presents to authenticate its client (RFC 6749 §2.3):
// one method at most, read by ClientCredentials and nowhere else, so that every endpoint
// that authenticates clients (token, introspection, revocation, backchannel
// authentication and its grant) refuses two methods alike and decodes each alike.
type Credentials struct {
	// Method is AuthSecretBasic, AuthSecretPost or AuthPrivateKeyJWT; "" when the request
	// presents no client authentication (a public client, or a credential's holder).
	Method string
	// ID is the client the request claims to be: the Basic user, the form's client_id or
	// the assertion's sub; for Method "" the form's client_id, "" when absent.
	ID string
	// Secret is the secret of client_secret_basic and client_secret_post.
	Secret string
	// Assertion is private_key_jwt's JWT: its iss and sub are ID, nothing else about it is
	// checked yet (the client's keys verify it).
	Assertion string
}

// Presented reports whether the request authenticates a client at all.
func (c Credentials) Presented() bool { return c.Method != "" }

// ClientCredentials reads the client authentication a request presents: the request's
// Authorization header (client_secret_basic) and its form body (client_secret_post,
// private_key_jwt); form may be nil when the body could not be read. A malformed Basic
// header is invalid_client, more than one method invalid_request (RFC 6749 §2.3: a client
// MUST NOT use more than one), as is a client_id that names another client than the one
// authenticating. An error means credentials were presented, badly.
func ClientCredentials(authorization string, form url.Values) (Credentials, error) {
	id, secret, basic, err := basicCredentials(authorization)
	if err != nil {
		return Credentials{}, ErrInvalidClient
	}
	formID, posted := form.Get("client_id"), form.Get("client_secret")
	asserted := form.Get("client_assertion") != "" || form.Get("client_assertion_type") != ""
	if n := btoi(basic) + btoi(posted != "") + btoi(asserted); n > 1 {
		return Credentials{}, InvalidRequest("use one client authentication method, not two")
	}
	switch {
	case basic:
		if formID != "" && formID != id {
			return Credentials{}, InvalidRequest("client_id does not match the Authorization header")
		}
		return Credentials{Method: AuthSecretBasic, ID: id, Secret: secret}, nil
	case posted != "":
		if formID == "" {
			return Credentials{}, ErrInvalidClient
		}
		return Credentials{Method: AuthSecretPost, ID: formID, Secret: posted}, nil
	case asserted:
		return asserting(form)
	}
	return Credentials{ID: formID}, nil
}

// asserting reads private_key_jwt (RFC 7523 §2.2): the assertion names its client as iss
// and sub, and a client_id, when given, must be that client.
func asserting(form url.Values) (Credentials, error) {
	if form.Get("client_assertion_type") != AssertionType {
		return Credentials{}, InvalidClient("client_assertion_type must be " + AssertionType)
	}
	raw := form.Get("client_assertion")
	iss, sub, ok := assertion.Unverified(raw)
	if !ok || iss == "" || iss != sub {
		return Credentials{}, InvalidClient("client_assertion must be a signed JWT whose iss and sub are the client_id")
	}
	if id := form.Get("client_id"); id != "" && id != sub {
		return Credentials{}, InvalidClient("client_id does not match the assertion's sub")
	}
	return Credentials{Method: AuthPrivateKeyJWT, ID: sub, Assertion: raw}, nil
}

// InvalidClient is invalid_client saying why, with the challenge RFC 6749 §5.2 asks of a
// 401.
func InvalidClient(why string) *apperr.Error {
	return Error(apperr.KindUnauthenticated, "invalid_client", why).WithHeader("WWW-Authenticate", `Basic realm="authcore", charset="UTF-8"`)
}

// basicCredentials reads client_secret_basic from an Authorization header: base64 of the
// client id and secret, each form-urlencoded first (RFC 6749 §2.3.1), which a plain HTTP
// Basic parser would not undo. present is false when the header is not Basic at all; err
// is set when it is, and malformed.
func basicCredentials(h string) (id, secret string, present bool, err error) {
	const prefix = "Basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", "", false, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[len(prefix):]))
	if err != nil {
		return "", "", true, err
	}
	u, p, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", true, errors.New("no colon")
	}
	if id, err = url.QueryUnescape(u); err != nil {
		return "", "", true, err
	}
	if secret, err = url.QueryUnescape(p); err != nil {
		return "", "", true, err
	}
	return id, secret, true, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
