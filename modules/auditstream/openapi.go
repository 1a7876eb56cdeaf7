package auditstream

import _ "embed"

// openapiYAML documents this module's routes (SPEC §15: each module its own).
//
//go:embed openapi.yaml
var openapiYAML []byte
