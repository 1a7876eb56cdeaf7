package schema_test

import (
	"bytes"
	"context"
	"database/sql"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "modernc.org/sqlite"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/authclient"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/schema"
)

// The one lifecycle rule, run as SQL on a real SQLite store: the current key always, the
// replaced key until its grace ends, nothing revoked or expired.
func TestPresentedAndLive(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/l.db?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, db)))
	defer client.Close()
	ctx := context.Background()
	if err := client.Schema.Create(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	mk := func(cur, prev string, graceEnd, expires time.Time, revoked bool) string {
		c := client.AuthClient.Create().SetProjectID("prj_1").SetBadgeID("bdg_" + cur).SetRole("r").SetExpiresAt(expires).
			SetSecretDigest([]byte(cur))
		if prev != "" {
			c.SetPreviousSecretDigest([]byte(prev)).SetPreviousExpiresAt(graceEnd)
		}
		if revoked {
			c.SetRevokedAt(earlier)
		}
		return c.SaveX(ctx).ID
	}
	inGrace := mk("cur1", "old1", later, later, false)
	graceOver := mk("cur2", "old2", earlier, later, false)
	mk("cur3", "", time.Time{}, later, true)    // revoked
	mk("cur4", "", time.Time{}, earlier, false) // expired

	find := func(key string) []string {
		return client.AuthClient.Query().Where(
			schema.Presented[predicate.AuthClient](schema.AuthClientLifecycle, []byte(key), now),
			schema.Live[predicate.AuthClient](now)).IDsX(ctx)
	}
	for key, want := range map[string]string{"cur1": inGrace, "old1": inGrace, "cur2": graceOver, "old2": "", "cur3": "", "cur4": "", "nope": ""} {
		got := find(key)
		if (want == "" && len(got) != 0) || (want != "" && (len(got) != 1 || got[0] != want)) {
			t.Errorf("%s: %v, want %q", key, got, want)
		}
	}
	if n := client.AuthClient.Query().Where(authclient.RevokedAtIsNil()).CountX(ctx); n != 3 {
		t.Fatalf("%d unrevoked", n)
	}
}

func TestMatched(t *testing.T) {
	exp, grace := time.Unix(2000, 0), time.Unix(1000, 0)
	for _, c := range []struct {
		name           string
		presented      string
		expires, grace *time.Time
		wantKey        string
		wantUntil      *time.Time
	}{
		{"current, never expiring", "cur", nil, &grace, "cur", nil},
		{"current, expiring", "cur", &exp, &grace, "cur", &exp},
		{"replaced: its grace", "old", &exp, &grace, "old", &grace},
		{"replaced: the expiry when earlier", "old", &grace, &exp, "old", &grace},
		{"replaced, credential never expiring", "old", nil, &grace, "old", &grace},
		{"replaced without a grace end: never", "old", &exp, nil, "", nil},
		{"neither", "other", &exp, &grace, "", nil},
	} {
		key, until := schema.Matched([]byte(c.presented), []byte("cur"), []byte("old"), c.expires, c.grace)
		if !bytes.Equal(key, []byte(c.wantKey)) || (until == nil) != (c.wantUntil == nil) || (until != nil && !until.Equal(*c.wantUntil)) {
			t.Errorf("%s: %q %v", c.name, key, until)
		}
	}
}

func TestLiveAt(t *testing.T) {
	now := time.Unix(1000, 0)
	before, after := now.Add(-time.Second), now.Add(time.Second)
	if !schema.LiveAt(now, false, nil) || !schema.LiveAt(now, false, &after) || schema.LiveAt(now, false, &now) ||
		schema.LiveAt(now, false, &before) || schema.LiveAt(now, true, nil) {
		t.Fatal("LiveAt")
	}
}
