package org

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// serve answers every query on a loopback UDP port with rcode and TXT records, or not at
// all when silent.
func serve(t *testing.T, rcode int, silent bool, txt ...[]string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if silent {
			return
		}
		m := new(dns.Msg)
		m.SetRcode(r, rcode)
		for _, parts := range txt {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 1}, Txt: parts})
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// What the configured resolver answers, as the proof of a domain reads it.
func TestTXTLookup(t *testing.T) {
	ctx := context.Background()
	name := challengePrefix + "acme.example"
	t.Run("a record of several strings is one value", func(t *testing.T) {
		got, err := newTXTLookup(serve(t, dns.RcodeSuccess, false, []string{"abc", "def"}, []string{"other"}))(ctx, name)
		if err != nil || len(got) != 2 || got[0] != "abcdef" || got[1] != "other" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("NXDOMAIN is no record", func(t *testing.T) {
		if _, err := newTXTLookup(serve(t, dns.RcodeNameError, false))(ctx, name); !errors.Is(err, errNoRecord) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("no TXT answer is no record", func(t *testing.T) {
		if _, err := newTXTLookup(serve(t, dns.RcodeSuccess, false))(ctx, name); !errors.Is(err, errNoRecord) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("SERVFAIL is a failed lookup", func(t *testing.T) {
		if _, err := newTXTLookup(serve(t, dns.RcodeServerFailure, false))(ctx, name); err == nil || errors.Is(err, errNoRecord) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a silent resolver is given up", func(t *testing.T) {
		start := time.Now()
		_, err := newTXTLookup(serve(t, 0, true))(ctx, name)
		if err == nil || time.Since(start) > dnsTimeout+2*time.Second {
			t.Fatalf("err %v after %s", err, time.Since(start))
		}
	})
}
