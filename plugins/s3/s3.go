// Package s3 is the "s3" badge product: SigV4 credentials for the project's bucket. The
// secret access key is sealed under the master key (SigV4 verification needs it back);
// POST /v1/service-badges/s3/verify lets a storage gateway check a signed request.
package s3

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/fx"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/s3credential"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	kind "github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// Settings are the product's own (SPEC §8), parsed with the service's.
type Settings struct {
	Endpoint string `name:"s3-endpoint" env:"AUTHCORE_S3_ENDPOINT" default:"http://127.0.0.1:9000" help:"Endpoint handed to holders of s3 badges (default ${default})."`
	Region   string `name:"s3-region" env:"AUTHCORE_S3_REGION" default:"us-east-1" help:"Region handed to holders of s3 badges (default ${default})."`
}

// NewSettings is the product's settings to parse (product.Plugin.Settings).
func NewSettings() any { return &Settings{} }

// Validate checks what kong cannot.
func (s *Settings) Validate() error {
	if u, err := url.Parse(s.Endpoint); err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("AUTHCORE_S3_ENDPOINT: %q is not an absolute URL", s.Endpoint)
	}
	return nil
}

// Plugin is the product as cmd/authcore/app lists it.
var Plugin = product.Plugin{Module: Module, Settings: NewSettings}

// The secret access keys, each sealed to its access key id, and the one a roll replaced,
// still in its grace, sealed to the replaced access key id.
var (
	sealedSecretKey         = secret.Declare(secret.Declaration{Name: "s3 secret keys", Table: s3credential.Table, Column: s3credential.FieldSecretSealed, AAD: s3credential.FieldAccessKeyID})
	sealedPreviousSecretKey = secret.Declare(secret.Declaration{Name: "s3 secret keys", Table: s3credential.Table, Column: s3credential.FieldPreviousSecretSealed, AAD: s3credential.FieldPreviousAccessKeyID})
)

// Module contributes the product and the verify endpoint.
var Module = fx.Module("plugin-s3",
	fx.Provide(New),
	product.AsProduct(func(p *Product) *Product { return p }),
	secret.AsSealed(sealedSecretKey, sealedPreviousSecretKey),
	httpserver.AsModuleRoutes("badge", func(p *Product) []httpserver.Route { return p.routes() }),
	kind.AsKinds(kinds),
	apidoc.AsFragment(fragment),
)

const (
	topic        = "s3_key"
	accessKeyLen = 16 // after the AKAC prefix
	secretKeyLen = 40
	upperAlnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	cacheSize    = 100_000
	cacheTTL     = 5 * time.Minute
	maxClockSkew = 15 * time.Minute
)

// Product is the s3 product.
type Product struct {
	ent      *ent.Client
	reads    *database.Reads
	keys     *secret.Keyring
	clock    clock.Clock
	bus      invalidation.Bus
	endpoint string
	region   string
	// endpointHost is the endpoint's host name: bucket.endpointHost is virtual-hosted style.
	endpointHost string
	cache        *bearer.Cache[string, *key]
	results      map[string]prometheus.Counter // verifications by result, kind s3_sigv4
	usage        usage.Counter
}

// badgeKind is the kind an s3 key's verifications are counted under: its badge's, so the
// badge list's usage shows them (SPEC §19).
const badgeKind = "service_badge"

var _ product.Product = (*Product)(nil)

// Params are the product's dependencies.
type Params struct {
	fx.In
	Ent     *ent.Client
	Reads   *database.Reads
	Keys    *secret.Keyring
	Clock   clock.Clock
	Bus     invalidation.Bus
	Config  *Settings
	Metrics *metrics.Credentials
	Usage   usage.Counter `optional:"true"`
}

// New returns the product.
func New(p Params) *Product {
	pr := &Product{ent: p.Ent, reads: p.Reads, keys: p.Keys, clock: p.Clock, bus: p.Bus, endpoint: p.Config.Endpoint, region: p.Config.Region,
		cache:   bearer.NewCache[string, *key](cacheSize, cacheTTL),
		results: map[string]prometheus.Counter{},
		usage:   cmp.Or[usage.Counter](p.Usage, usage.Discard),
	}
	for _, r := range []string{"ok", reasonBadSignature, reasonInvalidKey, reasonClockSkew, reasonPresignExpired, reasonBucketMismatch, reasonMalformed} {
		pr.results[r] = p.Metrics.Verifications.WithLabelValues("s3_sigv4", r)
	}
	if u, err := url.Parse(p.Config.Endpoint); err == nil {
		pr.endpointHost = strings.ToLower(u.Hostname())
	}
	bearer.Follow(p.Bus, topic, pr.cache)
	return pr
}

func (*Product) Key() string              { return "s3" }
func (*Product) Description() string      { return "Object storage bucket of the project." }
func (*Product) Mintable() (bool, string) { return true, "" }

// Credentials documents what Mint returns (the served OpenAPI document's BadgeCreated).
func (*Product) Credentials() any { return Credentials{} }

// Credentials is the create answer's `s3` object.
type Credentials struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
	Bucket          string `json:"bucket"`
	Region          string `json:"region"`
	Endpoint        string `json:"endpoint"`
}

// BucketName is the project's bucket: DNS-safe (lower-case letters, digits and hyphens,
// 3–63 characters) and derived from the project id, so it is stable and unique.
func BucketName(projectID string) string {
	return "authcore-" + strings.ToLower(strings.ReplaceAll(projectID, "_", "-"))
}

// Mint makes the badge's key pair inside the badge's transaction.
func (p *Product) Mint(ctx context.Context, tx *ent.Tx, b product.Badge) (any, error) {
	if p.endpoint == "" {
		return nil, errNotConfigured
	}
	accessKey, secretKey, sealed, err := p.newPair()
	if err != nil {
		return nil, err
	}
	bucket := BucketName(b.ProjectID)
	if err := tx.S3Credential.Create().
		SetBadgeID(b.ID).SetProjectID(b.ProjectID).SetAccessKeyID(accessKey).SetSecretSealed(sealed).
		SetBucket(bucket).SetRole(b.Role).SetNillableExpiresAt(b.ExpiresAt).
		Exec(ctx); err != nil {
		return nil, err
	}
	return Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, Bucket: bucket, Region: p.region, Endpoint: p.endpoint}, nil
}

// Revoke retires the badge's key pair inside the revoke's transaction, and makes every
// replica forget the key when that transaction commits.
func (p *Product) Revoke(ctx context.Context, tx *ent.Tx, b product.Badge) error {
	c, err := tx.S3Credential.Query().Where(s3credential.BadgeID(b.ID)).Only(ctx)
	if err != nil {
		return err
	}
	if err := tx.S3Credential.UpdateOne(c).SetRevokedAt(p.clock.Now()).Exec(ctx); err != nil {
		return err
	}
	if c.PreviousAccessKeyID != nil {
		if err := p.bus.Publish(ctx, tx, topic, *c.PreviousAccessKeyID); err != nil {
			return err
		}
	}
	return p.bus.Publish(ctx, tx, topic, c.AccessKeyID)
}

// Roll gives the badge a new key pair inside the roll's transaction; the replaced pair
// stays beside it, its secret still sealed, until graceUntil. Every replica forgets both
// older access keys when the transaction commits.
func (p *Product) Roll(ctx context.Context, tx *ent.Tx, b product.Badge, graceUntil *time.Time) (any, error) {
	if p.endpoint == "" {
		return nil, errNotConfigured
	}
	c, err := tx.S3Credential.Query().Where(s3credential.BadgeID(b.ID)).Only(ctx)
	if err != nil {
		return nil, err
	}
	accessKey, secretKey, sealed, err := p.newPair()
	if err != nil {
		return nil, err
	}
	u := tx.S3Credential.UpdateOne(c).SetAccessKeyID(accessKey).SetSecretSealed(sealed)
	if graceUntil != nil {
		u = u.SetPreviousAccessKeyID(c.AccessKeyID).SetPreviousSecretSealed(c.SecretSealed).SetPreviousExpiresAt(*graceUntil)
	} else {
		u = u.ClearPreviousAccessKeyID().ClearPreviousSecretSealed().ClearPreviousExpiresAt()
	}
	if err := u.Exec(ctx); err != nil {
		return nil, err
	}
	for _, k := range []*string{&c.AccessKeyID, c.PreviousAccessKeyID} {
		if k == nil {
			continue
		}
		if err := p.bus.Publish(ctx, tx, topic, *k); err != nil {
			return nil, err
		}
	}
	return Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, Bucket: c.Bucket, Region: p.region, Endpoint: p.endpoint}, nil
}

// newPair makes an access key id and secret key, the secret sealed under the master key
// bound to the id.
func (p *Product) newPair() (accessKey, secretKey, sealed string, err error) {
	tail, err := secret.RandomString(accessKeyLen, upperAlnum)
	if err != nil {
		return "", "", "", err
	}
	accessKey = "AKAC" + tail
	if secretKey, err = secret.RandomString(secretKeyLen, ""); err != nil {
		return "", "", "", err
	}
	if sealed, err = sealedSecretKey.Seal(p.keys, []byte(secretKey), accessKey); err != nil {
		return "", "", "", err
	}
	return accessKey, secretKey, sealed, nil
}

// key is a looked-up access key with its opened secret.
type key struct {
	badgeID, projectID, bucket, role string
	secret                           string
	expiresAt                        *time.Time
	// derived is the last signing key derived from secret, with its scope.
	derived atomic.Pointer[derived]
	// valid is the pre-encoded answer for a request this key signed.
	valid   []byte
	revoked bool
}

func (p *Product) lookup(ctx context.Context, accessKey string) (*key, error) {
	return p.cache.Load(ctx, accessKey, func(ctx context.Context) (*key, error) {
		c, err := database.Read(ctx, p.reads, topic, accessKey, func(ctx context.Context, h database.Handle) (*ent.S3Credential, error) {
			return h.Ent.S3Credential.Query().
				Where(s3credential.Or(s3credential.AccessKeyID(accessKey), s3credential.PreviousAccessKeyID(accessKey))).
				Only(ctx)
		})
		if database.IsNoRow(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		sealed, expires := c.SecretSealed, c.ExpiresAt
		if accessKey != c.AccessKeyID {
			// The pair a roll replaced: it works until the grace ends (SPEC §12).
			if c.PreviousSecretSealed == nil || c.PreviousExpiresAt == nil {
				return nil, nil
			}
			sealed = *c.PreviousSecretSealed
			if expires == nil || c.PreviousExpiresAt.Before(*expires) {
				expires = c.PreviousExpiresAt
			}
		}
		sec, err := p.keys.Open(sealed, []byte(accessKey))
		if err != nil {
			return nil, err
		}
		k := &key{badgeID: c.BadgeID, projectID: c.ProjectID, bucket: c.Bucket, role: c.Role, secret: string(sec), expiresAt: expires, revoked: c.RevokedAt != nil}
		// The valid answer is encoded once, so the hot path only copies bytes.
		if k.valid, err = json.Marshal(verdict{Valid: true, BadgeID: k.badgeID, ProjectID: k.projectID, Bucket: k.bucket, Role: k.role}); err != nil {
			return nil, err
		}
		return k, nil
	})
}
