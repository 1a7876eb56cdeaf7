package sink

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// s3Store is an S3-compatible server on loopback (gofakes3, in memory) with one bucket,
// and a client of its own to read back what a sink wrote. fail, while above zero, makes
// that many requests answer 503 before they reach the store.
type s3Store struct {
	url    string
	client *s3.Client
	fail   atomic.Int32
	puts   atomic.Int32
}

const testBucket = "audit"

func newS3Store(t testing.TB) *s3Store {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(testBucket); err != nil {
		t.Fatal(err)
	}
	faker := gofakes3.New(backend)
	st := &s3Store{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st.fail.Add(-1) >= 0 {
			http.Error(w, "<Error><Code>SlowDown</Code></Error>", http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPut {
			st.puts.Add(1)
		}
		faker.Server().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	st.url = srv.URL
	st.client = s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "reader", SecretAccessKey: "reader-secret"}, nil
		}),
	})
	return st
}

func (st *s3Store) config(prefix string) S3Config {
	return S3Config{Endpoint: st.url, Region: "eu-west-3", Bucket: testBucket, Prefix: prefix,
		AccessKeyID: "AKIATEST", SecretAccessKey: "secret", PathStyle: true}
}

func (st *s3Store) keys(t *testing.T) []string {
	t.Helper()
	out, err := st.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(testBucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, *o.Key)
	}
	return keys
}

// lines reads an object back, checks it is gzip, and returns its NDJSON lines.
func (st *s3Store) lines(t *testing.T, key string) []string {
	t.Helper()
	out, err := st.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	if ct := aws.ToString(out.ContentType); ct != "application/x-ndjson" {
		t.Errorf("content type %q", ct)
	}
	raw, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("object is not gzip: %v", err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestS3WritesOneGzipNDJSONObjectPerBatch(t *testing.T) {
	st := newS3Store(t)
	s, err := NewS3(st.config("/tenants/acme/"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := testEvents(41, 3, 0)
	batch[1].Body = []byte("{\n  \"id\": \"aud_000042\",\n  \"action\": \"user.signin\"\n}")
	if err := s.Send(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	keys := st.keys(t)
	want := "tenants/acme/2026/11/28/00000000000000000041-00000000000000000043-aud_000041.ndjson.gz"
	if len(keys) != 1 || keys[0] != want {
		t.Fatalf("objects %v, want [%s]", keys, want)
	}
	lines := st.lines(t, keys[0])
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(lines), lines)
	}
	for i, l := range lines {
		var compact bytes.Buffer
		_ = json.Compact(&compact, batch[i].Body)
		if l != compact.String() {
			t.Errorf("line %d: %s, want %s", i, l, compact.String())
		}
	}

	// The next batch is the next object, listed after the first.
	if err := s.Send(context.Background(), testEvents(44, 2, 0)); err != nil {
		t.Fatal(err)
	}
	if keys := st.keys(t); len(keys) != 2 || keys[0] != want || !strings.Contains(keys[1], "00000000000000000044-00000000000000000045-aud_000044") {
		t.Fatalf("objects %v", keys)
	}
}

func TestS3ResentBatchOverwritesItsObject(t *testing.T) {
	st := newS3Store(t)
	s, err := NewS3(st.config(""))
	if err != nil {
		t.Fatal(err)
	}
	batch := testEvents(1, 5, 0)
	for range 2 {
		if err := s.Send(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	keys := st.keys(t)
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "2026/11/28/") {
		t.Fatalf("objects %v after sending one batch twice, want one", keys)
	}
	if st.puts.Load() != 2 {
		t.Fatalf("%d puts, want 2", st.puts.Load())
	}
	if n := len(st.lines(t, keys[0])); n != 5 {
		t.Fatalf("%d lines, want 5", n)
	}
}

func TestS3ReceiverFailures(t *testing.T) {
	t.Run("a 503 fails the batch, and it lands when sent again", func(t *testing.T) {
		st := newS3Store(t)
		s, _ := NewS3(st.config("p"))
		st.fail.Store(1)
		batch := testEvents(1, 2, 0)
		err := s.Send(context.Background(), batch)
		var re interface{ HTTPStatusCode() int }
		if err == nil || !errors.As(err, &re) || re.HTTPStatusCode() != 503 {
			t.Fatalf("store answering 503: %v, want the status in the error (and no retry by the SDK)", err)
		}
		if keys := st.keys(t); len(keys) != 0 {
			t.Fatalf("objects %v after a refused put", keys)
		}
		if err := s.Send(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		if keys := st.keys(t); len(keys) != 1 {
			t.Fatalf("objects %v", keys)
		}
	})
	t.Run("no such bucket", func(t *testing.T) {
		st := newS3Store(t)
		c := st.config("")
		c.Bucket = "missing"
		s, _ := NewS3(c)
		var api smithy.APIError
		if err := s.Send(context.Background(), testEvents(1, 1, 0)); !errors.As(err, &api) || api.ErrorCode() != "NoSuchBucket" {
			t.Fatalf("got %v, want NoSuchBucket", err)
		}
	})
	t.Run("store down", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		s, _ := NewS3(S3Config{Endpoint: "http://" + addr, Bucket: "b", AccessKeyID: "a", SecretAccessKey: "s", PathStyle: true})
		if err := s.Send(context.Background(), testEvents(1, 1, 0)); err == nil || !strings.Contains(err.Error(), "connect") {
			t.Fatalf("store down: %v", err)
		}
	})
	t.Run("a body that is not JSON is refused before any request", func(t *testing.T) {
		st := newS3Store(t)
		s, _ := NewS3(st.config(""))
		batch := testEvents(1, 2, 0)
		batch[1].Body = []byte("{not json")
		if err := s.Send(context.Background(), batch); err == nil || !strings.Contains(err.Error(), "aud_000002") {
			t.Fatalf("got %v", err)
		}
		if st.puts.Load() != 0 {
			t.Fatal("a put was made")
		}
	})
}

func TestNewS3RefusesAnIncompleteConfig(t *testing.T) {
	ok := S3Config{Endpoint: "https://minio.example:9000", Bucket: "b", AccessKeyID: "a", SecretAccessKey: "s"}
	for _, tc := range []struct {
		name string
		edit func(*S3Config)
		want string
	}{
		{"complete", func(*S3Config) {}, ""},
		{"AWS itself", func(c *S3Config) { c.Endpoint = "" }, ""},
		{"no bucket", func(c *S3Config) { c.Bucket = "" }, "bucket"},
		{"no access key id", func(c *S3Config) { c.AccessKeyID = "" }, "access key"},
		{"no secret", func(c *S3Config) { c.SecretAccessKey = "" }, "access key"},
		{"endpoint without scheme", func(c *S3Config) { c.Endpoint = "minio.example:9000" }, "endpoint"},
		{"endpoint of another scheme", func(c *S3Config) { c.Endpoint = "ftp://minio.example" }, "endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := NewS3(c)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// BenchmarkS3Send: events per second an S3 sink stores in a loopback store, in batches of
// 500 (one object each).
func BenchmarkS3Send(b *testing.B) {
	st := newS3Store(b)
	s, err := NewS3(st.config("bench"))
	if err != nil {
		b.Fatal(err)
	}
	batch := testEvents(1, 500, 256)
	b.ResetTimer()
	for i := range b.N {
		batch[0].Seq = int64(i) // a new object each time, as a stream makes
		if err := s.Send(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "events/s")
}
