// Package api is authcore's OpenAPI 3.1 document (openapi.yaml, embedded) and the route
// that serves it as /openapi.json. The document is written by hand and kept honest by the
// tests: the whole-app harness (internal/apptest) validates every response it receives
// against it, and cmd/authcore fails when a registered route is missing from it.
package api

import (
	_ "embed"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"
	"sigs.k8s.io/yaml"

	"github.com/authcore/authcore/platform/httpserver"
)

//go:embed openapi.yaml
var source []byte

// JSON is the document as JSON.
func JSON() ([]byte, error) { return yaml.YAMLToJSON(source) }

// Module serves the document.
var Module = fx.Module("api", httpserver.AsRoutes(func() ([]httpserver.Route, error) {
	doc, err := JSON()
	if err != nil {
		return nil, err
	}
	serve := func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		return c.Send(doc)
	}
	return []httpserver.Route{{Method: http.MethodGet, Path: "/openapi.json", Handlers: []fiber.Handler{serve}}}, nil
}))
