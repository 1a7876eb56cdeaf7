package invalidation_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func replica(t *testing.T, st testkit.Store, url string) *invalidation.PG {
	var bus *invalidation.PG
	graph := func(cfg config.Config, key secret.MasterKey, out logging.Output) fx.Option {
		return fx.Options(testkit.Core(cfg, key, out), invalidation.Module, fx.Populate(&bus))
	}
	testkit.StartURL(t, st.Name, url, graph)
	select {
	case <-bus.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	return bus
}

func receive(bus invalidation.Bus, topic string) <-chan string {
	got := make(chan string, 16)
	bus.Subscribe(topic, func(k string) { got <- k })
	return got
}

// Publish reaches this replica's subscribers before it returns, on every store; other
// replicas on the same PostgreSQL hear it through NOTIFY, and a topic's subscribers hear
// only that topic.
func TestPublish(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		url := st.URL(t)
		a := replica(t, st, url)
		local, other := receive(a, "tokens"), receive(a, "badges")
		a.Publish(context.Background(), "tokens", "k1")
		select {
		case k := <-local:
			if k != "k1" {
				t.Fatalf("got %q", k)
			}
		default:
			t.Fatal("not delivered locally before Publish returned")
		}
		if st.Name != "postgres" {
			return
		}
		b := replica(t, st, url)
		remote := receive(b, "tokens")
		a.Publish(context.Background(), "tokens", "k2")
		select {
		case k := <-remote:
			if k != "k2" {
				t.Fatalf("got %q", k)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the other replica never heard it")
		}
		select {
		case k := <-other:
			t.Fatalf("another topic heard %q", k)
		default:
		}
	})
}
