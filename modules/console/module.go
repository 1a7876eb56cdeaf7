// Package console serves the web console for project admins (SPEC §10): one page and its
// modules, embedded in the binary, that drive the JSON API with the session cookies from
// the same origin. No build step: plain HTML, CSS and JavaScript modules.
package console

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/httpserver"
)

// Module serves the console at /console, its assets under /console/assets, sends / there,
// and lists the screens the credential kinds contribute (platform/lifecycle).
var Module = fx.Module("console", httpserver.AsModuleRoutes("console", routes))
