package invalidation_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/jackc/pgx/v5"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

type replica struct {
	*invalidation.PG
	app *testkit.App
}

func start(t *testing.T, st testkit.Store, url string) replica {
	var bus *invalidation.PG
	graph := func(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
		return fx.Options(testkit.Core(cfg, keys, out), invalidation.Module, fx.Populate(&bus))
	}
	a := testkit.StartURL(t, st.Name, url, graph)
	select {
	case <-bus.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	return replica{bus, a}
}

// publish publishes inside a transaction that commits, or rolls back when fail is set.
func (r replica) publish(t *testing.T, topic, key string, fail bool) {
	t.Helper()
	ctx := context.Background()
	rollback := errors.New("roll back")
	err := database.WithTx(ctx, r.app.Ent, func(tx *ent.Tx) error {
		if err := r.Publish(ctx, tx, topic, key); err != nil {
			return err
		}
		if fail {
			return rollback
		}
		return nil
	})
	if err != nil && !(fail && errors.Is(err, rollback)) {
		t.Fatal(err)
	}
}

func receive(bus invalidation.Bus, topic string) <-chan string {
	got := make(chan string, 16)
	bus.Subscribe(topic, func(k string) { got <- k })
	return got
}

// Publish is part of a transaction: nobody hears of a change that rolled back; on commit
// this replica's subscribers have heard it when the commit returns, and other replicas on
// the same PostgreSQL through the NOTIFY that committed with it. A topic's subscribers
// hear only that topic.
func TestPublish(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		url := st.URL(t)
		a := start(t, st, url)
		local, other := receive(a, "tokens"), receive(a, "badges")
		var remote <-chan string
		if st.Name == "postgres" {
			remote = receive(start(t, st, url), "tokens")
		}

		a.publish(t, "tokens", "rolled-back", true)
		a.publish(t, "tokens", "k1", false)
		select {
		case k := <-local:
			if k != "k1" {
				t.Fatalf("got %q first: a rolled-back change was delivered", k)
			}
		default:
			t.Fatal("not delivered locally when the commit returned")
		}
		if remote != nil {
			select {
			case k := <-remote:
				if k != "k1" {
					t.Fatalf("the other replica got %q first: a rolled-back NOTIFY was delivered", k)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the other replica never heard it")
			}
		}
		select {
		case k := <-other:
			t.Fatalf("another topic heard %q", k)
		default:
		}
	})
}

// SPEC §18: the message carries the publishing transaction's WAL position; the form of
// earlier releases ("topic\nkey") goes out beside it, so a rolling upgrade's old processes
// still hear every revocation.
func TestMessagesCarryTheWALPositionAndTheOldForm(t *testing.T) {
	for _, st := range testkit.Stores(t) {
		if st.Name != "postgres" {
			continue
		}
		url := st.URL(t)
		r := start(t, st, url)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "LISTEN "+invalidation.Channel); err != nil {
			t.Fatal(err)
		}
		r.publish(t, "kind", "k1", false)
		got := map[string]bool{}
		for range 2 {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got[n.Payload] = true
		}
		if !got["kind\nk1"] {
			t.Errorf("no message in the old form: %v", got)
		}
		lsn := regexp.MustCompile(`^kind\nk1\n[0-9A-F]+/[0-9A-F]+$`)
		found := false
		for p := range got {
			found = found || lsn.MatchString(p)
		}
		if !found {
			t.Errorf("no message with a WAL position: %v", got)
		}
	}
}
