package s3

import (
	_ "embed"

	"github.com/authcore/authcore/platform/apidoc"
)

// openapiYAML is the s3 product's own route in the served OpenAPI document.
//
//go:embed openapi.yaml
var openapiYAML []byte

func fragment() (apidoc.Fragment, error) { return apidoc.YAML("s3", openapiYAML) }
