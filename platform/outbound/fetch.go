package outbound

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/pquerna/cachecontrol/cacheobject"
	"golang.org/x/sync/singleflight"

	"github.com/authcore/authcore/platform/clock"
)

// Fetcher fetches small documents that other parties publish about themselves (client
// metadata documents, JSON Web Key Sets) under the policy's address rules: https only
// (http as the policy allows), no redirects, a size and a time limit. Each outcome,
// failures included, is cached for as long as the document's HTTP caching headers say,
// but at least MinAge and at most MaxAge, and concurrent fetches of one URL are one
// fetch: whoever can make authcore name a URL cannot make it fetch that URL more than
// once per MinAge per process (SPEC §9b, §21, §22).
type Fetcher struct {
	policy Policy
	clock  clock.Clock
	http   *http.Client
	limit  int64
	min    time.Duration
	max    time.Duration
	cache  *lru.Cache[string, Document]
	flight singleflight.Group
}

// Document is a fetch's outcome.
type Document struct {
	Body []byte
	// Err is why the document cannot be used (a FetchError), or nil.
	Err error
	// At is when it was fetched; Expires when the cache stops answering with it.
	At, Expires time.Time
}

// FetchError is a document that could not be fetched or is not acceptable; its text
// says why in words fit for the person or client who named the URL.
type FetchError struct{ Why string }

func (e *FetchError) Error() string { return e.Why }

// FetcherOptions are a Fetcher's limits.
type FetcherOptions struct {
	Limit   int64         // bytes
	Timeout time.Duration // per fetch
	MinAge  time.Duration
	MaxAge  time.Duration
	Entries int // documents cached
}

// NewFetcher returns a fetcher under policy, trusting roots (nil: the system's).
func NewFetcher(policy Policy, roots *x509.CertPool, clk clock.Clock, o FetcherOptions) *Fetcher {
	cache, _ := lru.New[string, Document](max(o.Entries, 1)) // cannot fail: the size is positive
	return &Fetcher{policy: policy, clock: clk, limit: o.Limit, min: o.MinAge, max: o.MaxAge, cache: cache,
		http: &http.Client{Transport: policy.Transport(o.Timeout, roots), Timeout: o.Timeout,
			// A redirect is an answer, not an instruction: following it would let the
			// first host choose the second, past the address check.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Get is the document at rawURL: the cached outcome while it lasts, else a fetch.
func (f *Fetcher) Get(ctx context.Context, rawURL string) Document {
	if d, ok := f.cache.Get(rawURL); ok && f.clock.Now().Before(d.Expires) {
		return d
	}
	return f.fetchOnce(ctx, rawURL)
}

// Refresh is Get, except that an outcome older than MinAge is fetched again whatever
// its caching headers said: a key set that lacks a key a party has just started using.
func (f *Fetcher) Refresh(ctx context.Context, rawURL string) Document {
	if d, ok := f.cache.Get(rawURL); ok && f.clock.Now().Sub(d.At) < f.min {
		return d
	}
	return f.fetchOnce(ctx, rawURL)
}

func (f *Fetcher) fetchOnce(ctx context.Context, rawURL string) Document {
	v, _, _ := f.flight.Do(rawURL, func() (any, error) {
		now := f.clock.Now()
		body, ttl, err := f.fetch(ctx, rawURL)
		var why *FetchError
		if err != nil && !errors.As(err, &why) {
			err = &FetchError{"it could not be fetched"}
		}
		d := Document{Body: body, Err: err, At: now, Expires: now.Add(min(max(ttl, f.min), f.max))}
		f.cache.Add(rawURL, d)
		return d, nil
	})
	return v.(Document)
}

func (f *Fetcher) fetch(ctx context.Context, rawURL string) ([]byte, time.Duration, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Fragment != "" || u.User != nil || (u.Scheme != "https" && !(u.Scheme == "http" && f.policy.AllowHTTP)) {
		return nil, 0, &FetchError{"its URL must be https, without a fragment or user info"}
	}
	if why, ok := f.policy.CheckURL(ctx, rawURL); !ok {
		return nil, 0, &FetchError{"its address " + why}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, 0, &FetchError{"its URL is not usable"}
	}
	req.Header.Set("Accept", "application/json")
	res, err := f.http.Do(req)
	if err != nil {
		if errors.Is(err, ErrAddress) {
			return nil, 0, &FetchError{"its address is not allowed"}
		}
		return nil, 0, &FetchError{"it could not be fetched"}
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, 0, &FetchError{"fetching it answered " + strconv.Itoa(res.StatusCode) + " (redirects are not followed)"}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, f.limit+1))
	if err != nil {
		return nil, 0, &FetchError{"it could not be read"}
	}
	if int64(len(body)) > f.limit {
		return nil, 0, &FetchError{fmt.Sprintf("it is larger than %s", size(f.limit))}
	}
	return body, cacheFor(res, f.clock.Now()), nil
}

// cacheFor is how long a fetched document may be reused by its caching headers; 0 when
// they say nothing or forbid it.
func cacheFor(res *http.Response, now time.Time) time.Duration {
	reasons, expires, err := cacheobject.UsingRequestResponse(res.Request, res.StatusCode, res.Header, false)
	if err != nil || len(reasons) > 0 || expires.IsZero() {
		return 0
	}
	return expires.Sub(now)
}

func size(n int64) string {
	if n%1024 == 0 {
		return strconv.FormatInt(n/1024, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
