package oauth

import (
	"context"
	"errors"
	"mime"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
)

const formType = "application/x-www-form-urlencoded"

// formOf reads an application/x-www-form-urlencoded body.
func formOf(c *fiber.Ctx) (url.Values, error) {
	// The exact type (what clients send) needs no parsing: mime.ParseMediaType was 8% of
	// an introspection's own CPU. Anything else (parameters, other case) is parsed.
	if ct := c.Get(fiber.HeaderContentType); ct != formType {
		if mt, _, _ := mime.ParseMediaType(ct); mt != formType {
			return nil, oauth.InvalidRequest("the body must be application/x-www-form-urlencoded")
		}
	}
	form, err := url.ParseQuery(string(c.Body()))
	if err != nil {
		return nil, oauth.InvalidRequest("the body is not valid form encoding")
	}
	return form, nil
}

// presentedBy reads the client authentication a request carries; a malformed Basic
// header is invalid_client before anything else, then a malformed form is itself.
func presentedBy(c *fiber.Ctx, form url.Values, ferr error) (oauth.Credentials, error) {
	creds, err := oauth.ClientCredentials(c.Get(fiber.HeaderAuthorization), form)
	if err == nil && ferr != nil { // form is nil: err can only be the header's
		return oauth.Credentials{}, ferr
	}
	return creds, err
}

// clientAuth authenticates confidential clients by client_secret_basic,
// client_secret_post or private_key_jwt, with the contributed authenticators. It is the
// token endpoint's, and oauth.ClientAuthenticator for endpoints served elsewhere (SPEC
// §23); it depends on no grant, so a grant may depend on it.
type clientAuth struct {
	clients []oauth.Clients
	replay  assertion.Replay
	clock   clock.Clock
	cfg     config.Config
}

var _ oauth.ClientAuthenticator = (*clientAuth)(nil)

// AuthenticateClient is client authentication as the token endpoint does it.
func (a *clientAuth) AuthenticateClient(ctx context.Context, creds oauth.Credentials, endpoint string) (oauth.Client, error) {
	return a.client(identity.WithIssuer(ctx, a.cfg.SelfURL()), creds, endpoint)
}

// client authenticates the caller by the credentials it presented (RFC 6749 §2.3.1, RFC
// 7523 §2.2), with whichever contributed authenticator knows it. endpoint is the URL path
// the request came to: an assertion may name it as its audience. ctx carries the issuer.
func (a *clientAuth) client(ctx context.Context, creds oauth.Credentials, endpoint string) (oauth.Client, error) {
	switch creds.Method {
	case oauth.AuthPrivateKeyJWT:
		return a.assertedClient(ctx, creds, endpoint)
	case "":
		return oauth.Client{}, oauth.ErrInvalidClient
	}
	for _, clients := range a.clients {
		cl, ok, err := clients.Authenticate(ctx, creds.ID, creds.Secret)
		if err != nil {
			return oauth.Client{}, err
		}
		if ok {
			cl.Method = creds.Method
			return registered(cl)
		}
	}
	return oauth.Client{}, oauth.ErrInvalidClient
}

// registered refuses a client that authenticated otherwise than by the method it
// registered (SPEC §29): a client_secret_basic client whose secret arrives in a form
// body (client_secret_post) went through a path its registration ruled out.
func registered(cl oauth.Client) (oauth.Client, error) {
	if cl.Registered != "" && cl.Registered != cl.Method {
		return oauth.Client{}, oauth.Error(apperr.KindUnauthenticated, "invalid_client",
			"this client registered "+cl.Registered+": authenticate with it, not "+cl.Method).
			WithHeader("WWW-Authenticate", `Basic realm="authcore", charset="UTF-8"`)
	}
	return cl, nil
}

// assertedClient authenticates private_key_jwt (RFC 7523 §2.2, SPEC §21): an assertion
// whose iss and sub are the client (oauth.ClientCredentials saw to that), for this
// server, short-lived, used once on any replica, signed by a key the client registered.
func (a *clientAuth) assertedClient(ctx context.Context, creds oauth.Credentials, endpoint string) (oauth.Client, error) {
	sub, raw := creds.ID, creds.Assertion
	issuer := identity.IssuerFrom(ctx)
	audiences := []string{issuer, issuer + oauth.TokenPath, issuer + endpoint}
	for _, clients := range a.clients {
		keyed, ok := clients.(oauth.KeyedClients)
		if !ok {
			continue
		}
		cl, keys, ok, err := keyed.ClientKeys(ctx, sub)
		if err != nil {
			return oauth.Client{}, err
		}
		if !ok {
			continue
		}
		_, err = assertion.Verify(ctx, raw, keys, assertion.Expect{Issuer: sub, Subject: sub, Audiences: audiences, OneAudience: true,
			MaxLifetime: oauth.MaxAssertionLifetime}, a.clock.Now(), a.replay)
		var refused *assertion.Error
		if errors.As(err, &refused) {
			return oauth.Client{}, oauth.InvalidClient(refused.Why)
		}
		if err != nil {
			return oauth.Client{}, err
		}
		cl.Method = oauth.AuthPrivateKeyJWT
		return registered(cl)
	}
	return oauth.Client{}, oauth.InvalidClient("no client with keys is registered as " + sub)
}
