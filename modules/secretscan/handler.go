package secretscan

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/httpserver"
)

var (
	errNoScanning   = apperr.NotFound("secret scanning is not configured")
	errBadSignature = apperr.New(apperr.KindUnauthenticated, "invalid_signature", "the report's signature does not verify")
	errBadReport    = apperr.Validation(apperr.Issue{Field: "body", Reason: "must be a JSON array of {token, type, url, source}"})
)

type handler struct {
	keys *keyFile
	// kinds are every kind of secret any module or plugin contributed: what GitHub is
	// told to look for, and what a report may revoke.
	kinds *credential.Registry
}

func (h *handler) routes() []httpserver.Route {
	return []httpserver.Route{{Method: http.MethodPost, Path: Path, Handlers: []fiber.Handler{h.report}}}
}

// match is one reported secret.
type match struct {
	Token  string `json:"token"`
	Type   string `json:"type"`
	URL    string `json:"url"`
	Source string `json:"source"`
}

// label is GitHub's answer format for one reported secret.
type label struct {
	TokenRaw  string `json:"token_raw"`
	TokenType string `json:"token_type"`
	Label     string `json:"label"`
}

// report verifies GitHub's signature over the raw body before reading anything, then
// revokes every live secret reported. A secret failing its checksum is a false positive
// without a lookup.
func (h *handler) report(c *fiber.Ctx) error {
	if h.keys.path == "" {
		return errNoScanning
	}
	body := c.Body()
	if err := h.keys.verify(c.Get("Github-Public-Key-Identifier"), c.Get("Github-Public-Key-Signature"), body); err != nil {
		if errors.Is(err, errBadSignature) {
			return errBadSignature
		}
		return err
	}
	var matches []match
	if err := json.Unmarshal(body, &matches); err != nil {
		return errBadReport
	}
	out := make([]label, 0, len(matches))
	origin := httpserver.Origin(c)
	for _, m := range matches {
		result := "false_positive"
		if k, ok := h.kinds.Of(m.Token); ok && k.Pattern != "" {
			r := credential.Revocation{Action: "credential.leak_revoke", Origin: origin, Actor: audit.ActorSystem,
				Metadata: map[string]any{"via": "leak_report", "url": m.URL, "source": m.Source}}
			err := k.Revoke(c.UserContext(), m.Token, r)
			switch {
			case err == nil:
				result = "true_positive"
			case !errors.Is(err, credential.ErrNotLive):
				return err
			}
		}
		out = append(out, label{TokenRaw: m.Token, TokenType: m.Type, Label: result})
	}
	return c.JSON(out)
}

// keyFile is GitHub's public-keys document, read again whenever the file changes.
type keyFile struct {
	path string
	mu   sync.Mutex
	mod  time.Time
	keys map[string]*ecdsa.PublicKey
}

// verify checks an ECDSA P-256 / SHA-256 signature (base64 of ASN.1) over body, by the key
// the identifier names.
func (k *keyFile) verify(id, sig string, body []byte) error {
	keys, err := k.load()
	if err != nil {
		return err
	}
	pub, ok := keys[id]
	raw, derr := base64.StdEncoding.DecodeString(sig)
	if !ok || id == "" || derr != nil || len(raw) == 0 {
		return errBadSignature
	}
	sum := sha256.Sum256(body)
	if !ecdsa.VerifyASN1(pub, sum[:], raw) {
		return errBadSignature
	}
	return nil
}

func (k *keyFile) load() (map[string]*ecdsa.PublicKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fi, err := os.Stat(k.path)
	if err != nil {
		return nil, err
	}
	if k.keys != nil && fi.ModTime().Equal(k.mod) {
		return k.keys, nil
	}
	b, err := os.ReadFile(k.path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		PublicKeys []struct {
			ID  string `json:"key_identifier"`
			Key string `json:"key"`
		} `json:"public_keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	keys := map[string]*ecdsa.PublicKey{}
	for _, e := range doc.PublicKeys {
		block, _ := pem.Decode([]byte(e.Key))
		if block == nil {
			continue
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if ec, ok := pub.(*ecdsa.PublicKey); err == nil && ok {
			keys[e.ID] = ec
		}
	}
	k.keys, k.mod = keys, fi.ModTime()
	return keys, nil
}
