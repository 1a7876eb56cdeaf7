package federation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/outbound"
)

// A bad providers file stops the process with one line naming the entry and the rule.
func TestProvidersFileRefusals(t *testing.T) {
	for name, c := range map[string]struct{ yaml, want string }{
		"reserved id":     {"providers:\n  - {id: idp_x, preset: google, clientId: a, clientSecret: b}\n", "providers[0].id"},
		"duplicate id":    {"providers:\n  - {id: g, preset: google, clientId: a, clientSecret: b}\n  - {id: g, preset: google, clientId: a, clientSecret: b}\n", "providers[1].id"},
		"no secret":       {"providers:\n  - {id: g, preset: google, clientId: a}\n", "clientSecret"},
		"unknown type":    {"providers:\n  - {id: g, type: saml, clientId: a, clientSecret: b}\n", "type"},
		"not yaml":        {"providers: [", "AUTHCORE_PROVIDERS_FILE"},
		"metadata issuer": {"providers:\n  - {id: g, type: oidc, issuer: 'http://169.254.169.254', clientId: a, clientSecret: b}\n", "issuer"},
	} {
		path := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(path, []byte(c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadFile(context.Background(), path, outbound.Policy{AllowHTTP: true})
		if err == nil || !strings.HasPrefix(err.Error(), "AUTHCORE_PROVIDERS_FILE") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := loadFile(context.Background(), filepath.Join(t.TempDir(), "missing.yaml"), outbound.Policy{}); err == nil {
		t.Error("a missing file was accepted")
	}
	fc, err := loadFile(context.Background(), "", outbound.Policy{})
	if err != nil || len(fc.Providers) != 0 || fc.Methods != nil {
		t.Errorf("no file: %v %v", fc, err)
	}
}
