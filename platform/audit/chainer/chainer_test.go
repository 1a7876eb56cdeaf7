package chainer_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/audit/chainer"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(testkit.Core(cfg, keys, out), audit.Module, chainer.Module, chainer.Run,
		fx.Decorate(func() chainer.Timing { return chainer.Timing{Every: 10 * time.Millisecond} }))
}

// Writers on every replica record events of two projects at once; the chain each project
// ends up with is gapless (1…n), holds every event once, and every link is audit.Link of
// the one before. On PostgreSQL two replicas chain the same store: their chainers take
// turns under the advisory lock.
func TestConcurrentWritersGetAGaplessChain(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		url := st.FreshURL(t)
		replicas := 1
		if st.Name == "postgres" {
			replicas = 2
		}
		var recs []*audit.Recorder
		var clients []*ent.Client
		for range replicas {
			var rec *audit.Recorder
			a := testkit.StartURL(t, st.Name, url, graph, testkit.WithFx(fx.Populate(&rec)))
			recs, clients = append(recs, rec), append(clients, a.Ent)
		}
		projects := []string{"prj_chain_a_" + st.Name, "prj_chain_b_" + st.Name}
		const writers, each = 8, 15
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, c := i%replicas, clients[i%replicas]
				for j := range each {
					err := database.WithTx(ctx, c, func(tx *ent.Tx) error {
						// Two events in one transaction, as a change and its side effect may be.
						for _, p := range projects {
							if _, err := recs[r].Record(ctx, tx, audit.Event{ProjectID: p, Action: "test.write",
								Metadata: map[string]any{"writer": i, "n": j, "note": fmt.Sprintf("w%d-%d", i, j)}}); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		c := clients[0]
		deadline := time.Now().Add(15 * time.Second)
		for {
			n, err := c.AuditEvent.Query().Where(auditevent.ChainSeqIsNil()).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d events still unchained", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		for _, p := range projects {
			evs, err := c.AuditEvent.Query().Where(auditevent.ProjectID(p)).Order(auditevent.ByChainSeq()).All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != writers*each {
				t.Fatalf("%s: %d events, want %d", p, len(evs), writers*each)
			}
			prev := ""
			for i, e := range evs {
				if *e.ChainSeq != int64(i+1) {
					t.Fatalf("%s: event %d has chain_seq %d: a gap or a repeat", p, i, *e.ChainSeq)
				}
				want, err := audit.Link(prev, *e.ChainSeq, e)
				if err != nil {
					t.Fatal(err)
				}
				if e.Hash == nil || *e.Hash != want {
					t.Fatalf("%s: link %d is %v, want %s", p, i+1, e.Hash, want)
				}
				prev = want
			}
		}
	})
}
