package org

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// dnsTimeout bounds one lookup of a challenge record: a domain whose servers do not
// answer in time is not proven, and the admin's request does not hang on them.
const dnsTimeout = 5 * time.Second

// errNoRecord is a lookup that found no TXT record (NXDOMAIN, or none of that type).
var errNoRecord = errors.New("no TXT record")

// txtLookup answers the TXT records of name, each record's strings joined.
type txtLookup func(ctx context.Context, name string) ([]string, error)

// newTXTLookup asks the DNS server at resolver (host:port, AUTHCORE_DNS_RESOLVER), or the
// system's resolver when it is empty.
func newTXTLookup(resolver string) txtLookup {
	if resolver == "" {
		return func(ctx context.Context, name string) ([]string, error) {
			ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
			defer cancel()
			txt, err := net.DefaultResolver.LookupTXT(ctx, name)
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
				return nil, errNoRecord
			}
			return txt, err
		}
	}
	return func(ctx context.Context, name string) ([]string, error) {
		ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
		defer cancel()
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(name), dns.TypeTXT)
		c := &dns.Client{Net: "udp", Timeout: dnsTimeout}
		r, _, err := c.ExchangeContext(ctx, q, resolver)
		if err == nil && r.Truncated { // too big for a datagram: ask again over TCP
			c.Net = "tcp"
			r, _, err = c.ExchangeContext(ctx, q, resolver)
		}
		if err != nil {
			return nil, err
		}
		switch r.Rcode {
		case dns.RcodeSuccess:
		case dns.RcodeNameError:
			return nil, errNoRecord
		default:
			return nil, errors.New("the resolver answered " + dns.RcodeToString[r.Rcode])
		}
		var out []string
		for _, rr := range r.Answer {
			if t, ok := rr.(*dns.TXT); ok {
				out = append(out, strings.Join(t.Txt, ""))
			}
		}
		if len(out) == 0 {
			return nil, errNoRecord
		}
		return out, nil
	}
}
