package agenttoken

import _ "embed"

// openapiYAML is the agent tokens' part of the served OpenAPI document.
//
//go:embed openapi.yaml
var openapiYAML []byte
