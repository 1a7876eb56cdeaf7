package auditstream_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/octetcounting"
	"github.com/leodido/go-syslog/v4/rfc5424"

	"github.com/authcore/authcore/internal/apptest"
)

// What the issue asks of a new user: a project admin adds a syslog stream and an S3 stream,
// and every mint, roll and revoke shows up in both, each event once after deduplication on
// its id, in the native format, through the real worker. The receivers are stock: an
// RFC 6587 octet-counting listener parsed by go-syslog, and gofakes3's S3 server.
func TestSyslogAndS3StreamsGetEveryEvent(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))

		var mu sync.Mutex
		syslogIDs := map[string]int{}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go octetcounting.NewParser(syslog.WithListener(func(res *syslog.Result) {
					if res.Error != nil {
						t.Errorf("syslog: %v", res.Error)
						return
					}
					m := res.Message.(*rfc5424.SyslogMessage)
					var e event
					if m.Message == nil || json.Unmarshal([]byte(*m.Message), &e) != nil {
						t.Errorf("syslog message is not an event: %v", m.Message)
						return
					}
					mu.Lock()
					syslogIDs[e.ID]++
					mu.Unlock()
				})).Parse(c)
			}
		}()
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		p, _ := strconv.Atoi(port)
		w.post(w.streams(), map[string]any{"type": "syslog", "host": host, "port": p, "tls": false}).Expect(t, 201, nil)

		backend := s3mem.New()
		if err := backend.CreateBucket("audit"); err != nil {
			t.Fatal(err)
		}
		s3srv := httptest.NewServer(gofakes3.New(backend).Server())
		t.Cleanup(s3srv.Close)
		w.post(w.streams(), map[string]any{"type": "s3", "endpoint": s3srv.URL, "region": "us-east-1", "bucket": "audit",
			"prefix": "authcore", "accessKeyId": "AKIATEST", "secretAccessKey": "s3-secret-key", "pathStyle": true}).Expect(t, 201, nil)
		s3IDs := func() map[string]int {
			ids := map[string]int{}
			list, err := backend.ListBucket("audit", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range list.Contents {
				obj, err := backend.GetObject("audit", o.Key, nil)
				if err != nil {
					t.Fatal(err)
				}
				zr, err := gzip.NewReader(obj.Contents)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(zr)
				obj.Contents.Close()
				for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
					var e event
					if err := json.Unmarshal(line, &e); err != nil {
						t.Fatalf("%s: %v", o.Key, err)
					}
					ids[e.ID]++
				}
				if !strings.HasPrefix(o.Key, "authcore/") || !strings.HasSuffix(o.Key, ".ndjson.gz") {
					t.Errorf("object key %s", o.Key)
				}
			}
			return ids
		}

		before := len(w.trail(t))
		agent := w.mint(t, "first")
		w.post(agent+"/roll", map[string]any{}).Expect(t, 200, nil)
		w.revoke(t, agent)
		w.mint(t, "second")
		want := w.trail(t)[before:]
		if len(want) != 4 {
			t.Fatalf("%d events, want 4", len(want))
		}
		holds := func(got map[string]int) bool {
			for _, id := range want {
				if got[id] == 0 {
					return false
				}
			}
			return true
		}
		waitFor(t, "every event in syslog", func() bool { mu.Lock(); defer mu.Unlock(); return holds(syslogIDs) })
		waitFor(t, "every event in S3", func() bool { return holds(s3IDs()) })
	})
}
