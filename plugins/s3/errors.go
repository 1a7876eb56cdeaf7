package s3

import (
	"fmt"

	"github.com/authcore/authcore/platform/product"
)

// errNotConfigured answers seed 4.4 rule 4 (503 storage_not_configured) when no endpoint
// is configured for the badges to point at.
var errNotConfigured = fmt.Errorf("object storage %w: set AUTHCORE_S3_ENDPOINT", product.ErrNotConfigured)
