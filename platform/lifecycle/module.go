package lifecycle

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
)

// Kind is a credential kind that is nothing but its own: Module makes it a full citizen.
type Kind struct {
	Spec
	// Module names it for AUTHCORE_MODULES (SPEC §18): its folder's name.
	Module string
	// Path names its routes: /v1/projects/{id}/<path> (list, mint), …/{<kind>Id} (revoke),
	// …/{<kind>Id}/roll, and /v1/<path>/me.
	Path string
	// Title heads its console screen and names it in the console's navigation.
	Title string
}

// Routes are its routes' paths.
func (k Kind) Routes() Routes {
	return Routes{Collection: "/v1/projects/:id/" + k.Path, ID: camel(k.Name) + "Id", Me: "/v1/" + k.Path + "/me"}
}

// Module is the kind as the composition root lists it: its lifecycle, its entries in the
// credential registry (introspection, RFC 7009, leak reports, the scanning pattern,
// webhook events), its routes, their OpenAPI description and its console screen.
func Module(k Kind) fx.Option {
	routes := k.Routes()
	return fx.Module(k.Module,
		fx.Provide(fx.Private, func(d Deps) (*Lifecycle, error) { return New(d, k.Spec, Hooks{}) }),
		credential.AsKinds(func(l *Lifecycle) []credential.Kind { return l.Kinds() }),
		httpserver.AsModuleRoutes(k.Module, func(l *Lifecycle, g *guard.Guard, kit bearer.Kit) []httpserver.Route {
			return l.Routes(g, kit, routes)
		}),
		apidoc.AsFragment(func(l *Lifecycle) apidoc.Fragment { return l.Fragment(routes) }),
		AsScreen(func(l *Lifecycle) Screen { return l.Screen(k.Title, routes) }),
	)
}
