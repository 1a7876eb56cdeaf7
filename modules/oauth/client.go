package oauth

import (
	"encoding/base64"
	"errors"
	"mime"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

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

// presented is the client authentication a request carries.
type presented struct {
	basic      bool
	id, secret string
}

// presentedBy reads client_secret_basic from the Authorization header; a malformed
// header is invalid_client before anything else, then a malformed form is itself.
func presentedBy(c *fiber.Ctx, ferr error) (presented, error) {
	id, sec, basic, err := basicAuth(c.Get(fiber.HeaderAuthorization))
	if err != nil {
		return presented{}, oauth.ErrInvalidClient
	}
	if ferr != nil {
		return presented{}, ferr
	}
	return presented{basic: basic, id: id, secret: sec}, nil
}

// client authenticates the caller by client_secret_basic or client_secret_post (RFC 6749
// §2.3.1), never both, with whichever contributed authenticator knows it.
func (s *server) client(c *fiber.Ctx, form url.Values, p presented) (oauth.Client, error) {
	id, sec := form.Get("client_id"), form.Get("client_secret")
	switch {
	case p.basic && sec != "":
		return oauth.Client{}, oauth.InvalidRequest("use one client authentication method, not two")
	case p.basic:
		if id != "" && id != p.id {
			return oauth.Client{}, oauth.InvalidRequest("client_id does not match the Authorization header")
		}
		id, sec = p.id, p.secret
	case id == "" || sec == "":
		return oauth.Client{}, oauth.ErrInvalidClient
	}
	for _, clients := range s.clients {
		cl, ok, err := clients.Authenticate(c.UserContext(), id, sec)
		if err != nil || ok {
			return cl, err
		}
	}
	return oauth.Client{}, oauth.ErrInvalidClient
}

// basicAuth reads client_secret_basic: both parts are form-urlencoded before base64
// (RFC 6749 §2.3.1). present is false when there is no Basic header. Hand-written: Fiber's
// basic-auth middleware neither unescapes the parts nor lets the form carry them instead.
func basicAuth(h string) (id, sec string, present bool, err error) {
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
	if sec, err = url.QueryUnescape(p); err != nil {
		return "", "", true, err
	}
	return id, sec, true, nil
}
