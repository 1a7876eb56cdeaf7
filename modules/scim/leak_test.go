package scim_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/credential"
)

// The directory token is a credential kind like the others: the secret-scanning pattern
// finds it in leaked text, a leak report revokes it, and its uses are counted.
func TestDirectoryTokenIsACredentialKind(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var reg *credential.Registry
		w := newWorld(t, st, apptest.WithFx(fx.Populate(&reg)))
		w.scim(http.MethodGet, "/Users", nil).Expect(t, 200, nil)
		w.scim(http.MethodGet, "/Users", nil).Expect(t, 200, nil)
		// Counted: written in batches every few seconds, so looked at until the batch
		// lands; on the first store only, to spare CI the wait twice.
		deadline := time.Now().Add(20 * time.Second)
		for st.Name == apptest.Stores(t)[0].Name {
			u := w.do(http.MethodGet, w.dirs()+"/"+w.dir, nil).Expect(t, 200, nil)["usage24h"].(map[string]any)
			if u["ok"].(float64) >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("usage24h %v", u)
			}
			time.Sleep(200 * time.Millisecond)
		}

		leaked := "config:\n  scim_token: " + w.token + "\n"
		if got := reg.Pattern().FindString(leaked); got != w.token {
			t.Fatalf("the scanning pattern finds %q", got)
		}
		if !strings.Contains(reg.ScanPattern(), "ac_scim_") {
			t.Fatalf("pattern %s", reg.ScanPattern())
		}
		kind, err := reg.Revoke(t.Context(), w.token, credential.Revocation{Actor: audit.ActorSystem, Action: "credential.leak_revoke"})
		if err != nil || kind != "scim_directory_token" {
			t.Fatalf("revoke: %q %v", kind, err)
		}
		scimError(t, w.scim(http.MethodGet, "/Users", nil), 401, "")
		if _, err := reg.Revoke(t.Context(), w.token, credential.Revocation{Actor: audit.ActorSystem}); err != credential.ErrNotLive {
			t.Fatalf("revoked twice: %v", err)
		}
		if !strings.Contains(auditActions(t, w), "credential.leak_revoke") {
			t.Fatal("no leak_revoke record")
		}
	})
}
