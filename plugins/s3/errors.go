package s3

import "errors"

// errNotConfigured answers seed 4.4 rule 4 (503 storage_not_configured) when no endpoint
// is set for the badges to point at.
var errNotConfigured = errors.New("object storage not configured: set AUTHCORE_S3_ENDPOINT")
