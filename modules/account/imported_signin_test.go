package account_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/account"
)

// A user whose stored hash is another system's signs in with the original password through
// the real sign-in route; afterwards the stored hash is argon2id and still takes the
// password, and a wrong password is refused before and after. The hash is written into the
// store directly: the import route (SPEC §25) that would write it is not built yet.
func TestImportedHashSignInRehashes(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		hashes := account.ImportedHashes(t, "original pw")
		hashes["firebase-scrypt"] = account.FirebaseVector
		for name, hash := range hashes {
			t.Run(name, func(t *testing.T) {
				pw := "original pw"
				if name == "firebase-scrypt" {
					pw = "user1password"
				}
				email := apptest.UniqueEmail(t)
				got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": email, "password": "a different one"}}).Expect(t, 201, nil)
				id := got["user"].(map[string]any)["id"].(string)
				ctx := context.Background()
				if err := a.Ent.User.Update().Where(user.ID(id)).SetPasswordHash(hash).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				signin := func(pw string, want int) {
					t.Helper()
					var body map[string]any
					if want != 200 {
						body = map[string]any{"code": "invalid_credentials"}
					}
					a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": email, "password": pw, "tenantId": "public"}}).Expect(t, want, body)
				}
				signin(pw+"!", 401)
				if h := a.Ent.User.GetX(ctx, id).PasswordHash; h != hash {
					t.Fatalf("a failed sign-in changed the hash to %q", h)
				}
				signin(pw, 200)
				stored := a.Ent.User.GetX(ctx, id).PasswordHash
				if !strings.HasPrefix(stored, "$argon2id$") {
					t.Fatalf("stored hash after sign-in: %q", stored)
				}
				if name != "argon2id" && stored == hash {
					t.Fatal("not re-hashed")
				}
				signin(pw, 200)
				signin(pw+"!", 401)
			})
		}
	})
}
