// Package secretscan is GitHub's secret-scanning partner endpoint (SPEC §12): a scan that
// finds an authcore secret in a public repository reports it here, signed by GitHub, and
// every live secret reported is revoked at once. The key file (AUTHCORE_SECRET_SCANNING_KEYS)
// is GitHub's public-keys document; operators refresh it and it is read again when it
// changes. It knows credentials only through the registry of platform/credential.
package secretscan

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/httpserver"
)

// Path is where reports arrive.
const Path = "/v1/secret-scanning/report"

// Module serves the endpoint when AUTHCORE_SECRET_SCANNING_KEYS is set (404 otherwise:
// the route exists, the answer says there is nothing here).
var Module = fx.Module("secretscan",
	httpserver.AsModuleRoutes("secretscan", func(cfg config.Config, kinds *credential.Registry) []httpserver.Route {
		return (&handler{keys: &keyFile{path: cfg.SecretScanningKeys}, kinds: kinds}).routes()
	}),
)
