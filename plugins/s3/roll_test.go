package s3_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

// A roll makes a new key pair; requests signed (by aws-sdk-go-v2) with the replaced one
// verify until the grace ends, then never. (A new id, not only a new secret key: the SDK's
// signer caches derived keys by access key id, which this test once tripped over.)
func TestRollKeepsTheOldSecretKeyForTheGrace(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		old := mint(t, a, admin, prj, nil)
		check := func(b badge) map[string]any {
			r, h := signed(t, b, http.MethodGet, "/"+b.Bucket+"/x", "", a.Clock.Now())
			return verify(a, parts(r, h)).Expect(t, 200, nil)
		}
		if check(old)["valid"] != true { // cached as valid
			t.Fatal("the minted key does not verify")
		}
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges/" + old.ID + "/roll",
			Body: map[string]any{"graceHours": 1}, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"auth": nil})
		s := got["s3"].(map[string]any)
		rolled := old
		rolled.AccessKey, rolled.Secret = s["accessKeyId"].(string), s["secretAccessKey"].(string)
		if rolled.AccessKey == old.AccessKey || rolled.Secret == old.Secret || len(rolled.Secret) != 40 || s["bucket"] != old.Bucket {
			t.Fatalf("rolled s3 credentials %v", s)
		}
		if check(rolled)["valid"] != true || check(old)["valid"] != true {
			t.Fatal("both secret keys must verify during the grace")
		}
		a.Clock.Advance(time.Hour)
		if v := check(old); v["valid"] != false || v["reason"] != "invalid_access_key" {
			t.Fatalf("the old secret key after its grace: %v", v)
		}
		if check(rolled)["valid"] != true {
			t.Fatalf("the new secret key stopped: %v", check(rolled))
		}
		db, logs := a.DumpDB(t), a.Logs.String()
		for _, k := range []string{old.Secret, rolled.Secret} {
			if strings.Contains(db, k) || strings.Contains(logs, k) {
				t.Fatal("a secret key is stored or logged in clear")
			}
		}
	})
}
