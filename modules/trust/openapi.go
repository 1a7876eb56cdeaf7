package trust

import _ "embed"

// openapiYAML is trust's part of the served OpenAPI document.
//
//go:embed openapi.yaml
var openapiYAML []byte
