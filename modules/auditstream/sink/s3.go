package sink

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5" //nolint:gosec // Content-MD5 is S3's integrity check, not a security measure
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Config names a bucket of any S3-compatible store (SPEC §28).
type S3Config struct {
	// Endpoint is the store's base URL; "" for AWS itself.
	Endpoint string
	// Region signs the requests; "" is us-east-1, which MinIO and most others accept.
	Region string
	Bucket string
	// Prefix is prepended to every object's key.
	Prefix                       string
	AccessKeyID, SecretAccessKey string
	// PathStyle addresses the bucket in the path (MinIO and most self-hosted stores)
	// rather than in the host name.
	PathStyle bool
	// HTTPClient carries the stream's outbound rules; nil uses the SDK's.
	HTTPClient *http.Client
}

// S3 writes each batch as one gzip-compressed NDJSON object.
type S3 struct {
	client *s3.Client
	bucket string
	prefix string
}

var _ Sink = (*S3)(nil)

// NewS3 returns an S3 sink, or an error naming what the configuration lacks. It does no
// I/O: a bucket that does not exist shows on the first Send.
func NewS3(c S3Config) (Sink, error) {
	if c.Bucket == "" {
		return nil, errors.New("s3: a bucket is required")
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return nil, errors.New("s3: an access key id and a secret access key are required")
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("s3: endpoint %q is not an http(s) URL", c.Endpoint)
		}
	}
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	creds := aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, Source: "authcore audit stream"}
	opts := s3.Options{
		Region:       region,
		Credentials:  aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil }),
		UsePathStyle: c.PathStyle,
		// The stream's worker owns retries and their backoff; the SDK's own would hide
		// a failing receiver behind its delays.
		Retryer: aws.NopRetryer{},
		// The SDK's default since 2025 adds CRC checksums (trailers on streaming
		// uploads) that several S3-compatible stores refuse; Content-MD5, which every
		// store checks, guards the body instead.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if c.Endpoint != "" {
		opts.BaseEndpoint = aws.String(c.Endpoint)
	}
	if c.HTTPClient != nil {
		opts.HTTPClient = c.HTTPClient
	}
	return &S3{client: s3.New(opts), bucket: c.Bucket, prefix: strings.Trim(c.Prefix, "/")}, nil
}

// Send puts the batch as one object. Its key depends on the batch alone, so a batch sent
// again after a failure overwrites its first copy rather than adding a second.
func (s *S3) Send(ctx context.Context, batch []Event) error {
	if len(batch) == 0 {
		return nil
	}
	body, err := ndjsonGzip(batch)
	if err != nil {
		return err
	}
	sum := md5.Sum(body) //nolint:gosec // see the import
	key := s.Key(batch)
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:          aws.String(s.bucket),
		Key:             aws.String(key),
		Body:            bytes.NewReader(body),
		ContentLength:   aws.Int64(int64(len(body))),
		ContentMD5:      aws.String(base64.StdEncoding.EncodeToString(sum[:])),
		ContentType:     aws.String("application/x-ndjson"),
		ContentEncoding: aws.String("gzip"),
	})
	if err != nil {
		return fmt.Errorf("s3: put %s/%s: %w", s.bucket, key, err)
	}
	return nil
}

// Key is the object a batch goes to: <prefix>/<yyyy>/<mm>/<dd>/<first seq>-<last
// seq>-<first event id>.ndjson.gz, dated by the first event (UTC). Sequence numbers are
// zero-padded to 20 digits so keys list in the chain's order.
func (s *S3) Key(batch []Event) string {
	first, last := batch[0], batch[len(batch)-1]
	name := fmt.Sprintf("%s/%020d-%020d-%s.ndjson.gz", first.Time.UTC().Format("2006/01/02"), first.Seq, last.Seq, keySafe(first.ID))
	if s.prefix == "" {
		return name
	}
	return s.prefix + "/" + name
}

// keySafe keeps an id to characters every store and every receiver's glob takes as is.
func keySafe(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			return r
		}
		return '_'
	}, id)
}

// ndjsonGzip renders one event body a line. The gzip header carries no time or name, so
// the same batch always makes the same bytes.
func ndjsonGzip(batch []Event) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	var line bytes.Buffer
	for i := range batch {
		line.Reset()
		// A body rendered with newlines inside would break NDJSON's one record a line.
		if err := json.Compact(&line, batch[i].Body); err != nil {
			return nil, fmt.Errorf("s3: event %s: body is not JSON: %w", batch[i].ID, err)
		}
		line.WriteByte('\n')
		if _, err := zw.Write(line.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Close holds nothing open.
func (s *S3) Close() error { return nil }
