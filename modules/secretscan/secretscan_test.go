package secretscan_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/event"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// keys writes a GitHub public-keys file holding pub under id.
func keys(t *testing.T, entries map[string]*ecdsa.PrivateKey) string {
	type entry struct {
		ID      string `json:"key_identifier"`
		Key     string `json:"key"`
		Current bool   `json:"is_current"`
	}
	var doc struct {
		PublicKeys []entry `json:"public_keys"`
	}
	for id, k := range entries {
		der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		doc.PublicKeys = append(doc.PublicKeys, entry{ID: id, Key: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), Current: true})
	}
	b, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "github-keys.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sign is what GitHub does: ECDSA P-256 over SHA-256 of the raw body, ASN.1, base64.
func sign(t *testing.T, k *ecdsa.PrivateKey, body []byte) string {
	sum := sha256.Sum256(body)
	sig, err := ecdsa.SignASN1(rand.Reader, k, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

func TestLeakReports(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		github, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		mallory, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		path := keys(t, map[string]*ecdsa.PrivateKey{"gh-key-1": github})
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.SecretScanningKeys = path }))
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		mint := func(path string, body any, status int) map[string]any {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: admin.Bearer()}).Expect(t, status, nil)
		}
		agent := mint("/v1/auth-core/projects/"+prj+"/ai/agents", map[string]any{}, 200)["plaintext"].(string)
		badge := mint("/v1/projects/"+prj+"/service-badges", map[string]any{"name": "d", "product": "db"}, 201)["plaintext"].(string)
		bad := agent[:len(agent)-1] + map[bool]string{true: "A", false: "B"}[agent[len(agent)-1] != 'A'] // checksum broken
		unknown := "ac_ai_" + strings.Repeat("0", 32) + "000000"

		report := []map[string]string{
			{"token": agent, "type": "authcore_ai_token", "url": "https://github.com/o/r/blob/main/.env", "source": "content"},
			{"token": badge, "type": "authcore_badge", "url": "https://github.com/o/r/commit/1", "source": "commit"},
			{"token": bad, "type": "authcore_ai_token", "url": "u", "source": "content"},
			{"token": unknown, "type": "authcore_ai_token", "url": "u", "source": "content"},
		}
		body, _ := json.Marshal(report)
		post := func(id, sig string) *apptest.Response {
			h := map[string]string{"Content-Type": "application/json"}
			if id != "" {
				h["Github-Public-Key-Identifier"] = id
			}
			if sig != "" {
				h["Github-Public-Key-Signature"] = sig
			}
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/secret-scanning/report", Body: body, Header: h})
		}

		t.Run("a forged, missing or unknown-key signature is 401 and revokes nothing", func(t *testing.T) {
			post("gh-key-1", sign(t, mallory, body)).Expect(t, 401, map[string]any{"code": "invalid_signature"})
			post("gh-key-2", sign(t, github, body)).Expect(t, 401, map[string]any{"code": "invalid_signature"})
			post("", "").Expect(t, 401, map[string]any{"code": "invalid_signature"})
			post("gh-key-1", "not base64!").Expect(t, 401, map[string]any{"code": "invalid_signature"})
			a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+agent).Expect(t, 200, nil)
		})
		t.Run("a signed report revokes every live secret and labels each", func(t *testing.T) {
			var labels []map[string]string
			post("gh-key-1", sign(t, github, body)).Decode(t, &labels)
			want := []string{"true_positive", "true_positive", "false_positive", "false_positive"}
			for i, l := range labels {
				if l["label"] != want[i] || l["token_raw"] != report[i]["token"] || l["token_type"] != report[i]["type"] {
					t.Fatalf("label %d: %v", i, l)
				}
			}
			a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+agent).Expect(t, 401, nil)
			a.Get("/v1/service-badges/me", "Authorization", "Bearer "+badge).Expect(t, 401, nil)
			evs, err := a.Ent.AuditEvent.Query().Where(auditevent.Action("credential.leak_revoke"), auditevent.ProjectID(prj)).All(context.Background())
			if err != nil || len(evs) != 2 || evs[0].Metadata["url"] == nil || evs[0].Metadata["source"] == nil || evs[0].ActorID != nil ||
				*evs[0].ActorType != "system" || *evs[1].ActorType != "system" {
				t.Fatalf("%+v %v", evs, err)
			}
			// And an event for the project's webhooks, with the same details.
			out, err := a.Ent.Event.Query().Where(event.Type("credential.leak_revoke"), event.ProjectID(prj)).All(context.Background())
			if err != nil || len(out) != 2 || !strings.Contains(string(out[0].Body), `"source":`) || !strings.Contains(string(out[0].Body), `"url":`) {
				t.Fatalf("outbox: %d events (%v)", len(out), err)
			}
		})
		t.Run("reported again, the revoked secrets are false positives", func(t *testing.T) {
			var labels []map[string]string
			post("gh-key-1", sign(t, github, body)).Decode(t, &labels)
			if labels[0]["label"] != "false_positive" || labels[1]["label"] != "false_positive" {
				t.Fatalf("%v", labels)
			}
		})
		t.Run("a signed body that is not a report is 400", func(t *testing.T) {
			body = []byte(`{"token":"x"}`)
			post("gh-key-1", sign(t, github, body)).Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
	})
}

func TestLeakReportsOffWithoutKeys(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/secret-scanning/report", Body: "[]"}).Expect(t, 404, map[string]any{"code": "not_found"})
}
