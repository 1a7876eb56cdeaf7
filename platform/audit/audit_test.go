package audit_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(testkit.Core(cfg, keys, out), audit.Module)
}

func TestRecordInsideTransaction(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		var rec *audit.Recorder
		a := testkit.Start(t, st, graph, testkit.WithFx(fx.Populate(&rec)))
		ctx := context.Background()
		actor, ff, ua := "usr_1", "203.0.113.9", "curl/8"
		project := "prj_" + st.Name + "_audit"

		var id string
		err := database.WithTx(ctx, a.Ent, func(tx *ent.Tx) error {
			ev, err := rec.Record(ctx, tx, audit.Event{
				ActorID: &actor, ProjectID: project, Action: "service_badge.create",
				Metadata: map[string]any{"badgeId": "bdg_1", "product": "db"},
				Origin:   audit.Origin{ClientIP: &ff, UserAgent: &ua},
			})
			if ev != nil {
				id = ev.ID
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Ent.AuditEvent.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if *got.ActorID != actor || got.ProjectID != project || got.Action != "service_badge.create" || *got.UserAgent != ua {
			t.Fatalf("record = %+v", got)
		}
		if got.Metadata["badgeId"] != "bdg_1" || got.Metadata["product"] != "db" {
			t.Fatalf("metadata = %v", got.Metadata)
		}
		// ipHash is the keyed hash of the address, never the address itself.
		want := expectedIPHash(t, project, ff)
		if got.IPHash == nil || *got.IPHash != want {
			t.Fatalf("ipHash = %v, want %s", got.IPHash, want)
		}

		// No address, no hash; no user agent, null.
		err = database.WithTx(ctx, a.Ent, func(tx *ent.Tx) error {
			_, err := rec.Record(ctx, tx, audit.Event{ProjectID: project, Action: "service_badge.revoke"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		bare, err := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(project), auditevent.Action("service_badge.revoke")).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bare.IPHash != nil || bare.UserAgent != nil || bare.ActorID != nil {
			t.Fatalf("want nulls, got %+v", bare)
		}
	})
}

// expectedIPHash recomputes the hash independently of the recorder: HMAC-SHA256 under the
// keyring's MAC key, which is itself checked against the keyring in secret's tests.
func expectedIPHash(t *testing.T, project, v string) string {
	k, err := secret.NewKeyring(testkit.TestMasterKey)
	if err != nil {
		t.Fatal(err)
	}
	got := k.MAC("audit-forwarded-for/"+project, []byte(v)) // keyed per project (SPEC §9a)
	if len(got) != 64 {
		t.Fatalf("not hex sha256: %q", got)
	}
	if _, err := hex.DecodeString(got); err != nil {
		t.Fatal(err)
	}
	return got
}

// Every record names its actor's type (SPEC §28): a user when an actor id is given and
// nothing else is said, the system when there is no actor, else what the caller names;
// the delegation rides along; the request id comes from ctx, never from the caller.
func TestRecordActorAndRequestID(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		var rec *audit.Recorder
		a := testkit.Start(t, st, graph, testkit.WithFx(fx.Populate(&rec)))
		project := "prj_" + st.Name + "_actors"
		user, agent := "usr_1", "tok_1"
		record := func(ctx context.Context, e audit.Event) *ent.AuditEvent {
			t.Helper()
			e.ProjectID = project
			var out *ent.AuditEvent
			if err := database.WithTx(ctx, a.Ent, func(tx *ent.Tx) error {
				var err error
				out, err = rec.Record(ctx, tx, e)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			got, err := a.Ent.AuditEvent.Get(ctx, out.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		ctx := logging.WithRequestID(context.Background(), "req-42")
		for name, c := range map[string]struct {
			ctx       context.Context
			event     audit.Event
			actorType string
			act       string
			requestID string
		}{
			"an actor id alone is a user": {ctx, audit.Event{ActorID: &user, Action: "x.a"}, "user", "map[]", "req-42"},
			"no actor is the system":      {context.Background(), audit.Event{Action: "x.b"}, "system", "map[]", "<nil>"},
			"an agent acting for a person": {ctx, audit.Event{ActorID: &agent, ActorType: audit.ClientActor(agent), Act: audit.Delegation(user, agent), Action: "x.c"},
				"agent_token", "map[act:map[sub:tok_1] sub:usr_1]", "req-42"},
			"a client": {ctx, audit.Event{ActorType: audit.ClientActor("cli_1"), Action: "x.d"}, "client", "map[]", "req-42"},
		} {
			t.Run(name, func(t *testing.T) {
				got := record(c.ctx, c.event)
				rid := "<nil>"
				if got.RequestID != nil {
					rid = *got.RequestID
				}
				if got.ActorType == nil || *got.ActorType != c.actorType || fmt.Sprint(got.Act) != c.act || rid != c.requestID || got.OrgID != nil {
					t.Fatalf("got type %v act %v request %v org %v", got.ActorType, got.Act, rid, got.OrgID)
				}
			})
		}
	})
}
