package oauth

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
)

// BasicCredentials reads client_secret_basic from an Authorization header: base64 of the
// client id and secret, each form-urlencoded first (RFC 6749 §2.3.1), which a plain HTTP
// Basic parser would not undo. present is false when the header is not Basic at all; err
// is set when it is, and malformed. Every endpoint that authenticates clients reads
// Basic credentials here, so none can decode them differently.
func BasicCredentials(h string) (id, secret string, present bool, err error) {
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
