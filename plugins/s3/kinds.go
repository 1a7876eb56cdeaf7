package s3

import (
	"context"
	"regexp"
	"strconv"

	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/s3credential"
	"github.com/authcore/authcore/ent/schema"
	kind "github.com/authcore/authcore/platform/credential"
)

// accessKeyPattern is an access key id this product issues.
var accessKeyPattern = regexp.MustCompile(`^AKAC[0-9A-Z]{` + strconv.Itoa(accessKeyLen) + `}$`)

// kinds: an s3 access key id (SPEC §9a). It is what a leaked key pair is found by (the
// secret key alone has no shape to scan for), so presenting it revokes the pair — the
// badge and every key of it. The id alone is not secret: whoever sees a request's
// Authorization header can revoke the key. The spec accepts that; an operator who does
// not can turn RFC 7009 off at the proxy for AKAC tokens.
func kinds(p *Product, badges kind.Badges) []kind.Kind {
	return []kind.Kind{{
		Name: "s3_access_key", Prefix: "AKAC", Pattern: `AKAC[0-9A-Z]{` + strconv.Itoa(accessKeyLen) + `}`,
		Match: accessKeyPattern.MatchString,
		Revoke: kind.RevokeBadgeOf(badges, func(ctx context.Context, id string) (string, error) {
			c, err := p.ent.S3Credential.Query().Where(s3credential.RevokedAtIsNil(),
				schema.Presented[predicate.S3Credential](schema.S3CredentialLifecycle, id, p.clock.Now())).Only(ctx)
			if err != nil {
				return "", err
			}
			return c.BadgeID, nil
		}),
	}}
}
