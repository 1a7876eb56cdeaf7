// Package api is authcore's OpenAPI 3.1 document and the route that serves it as
// /openapi.json. api/openapi.yaml (embedded) is the document of what the platform and the
// modules without routes of a kind serve; each kind, module and plugin that describes its
// own routes contributes a fragment (platform/apidoc), merged in here, and the enums of
// credential kinds and event types are filled from the registry. The tests keep it honest:
// the whole-app harness (internal/apptest) validates every response it receives against
// the served document, and cmd/authcore fails when a registered route is missing from it.
package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/httpserver"
)

//go:embed openapi.yaml
var source []byte

// JSON is api/openapi.yaml as written, as JSON: the platform's part of the document.
func JSON() ([]byte, error) { return apidoc.ToJSON(source) }

// Served is the document as a server with kinds and fragments serves it: the fragments
// merged in, and the credential kinds and webhook event types its enums list those
// registered (SPEC §15), so a kind or a product added as a plugin is documented with no
// edit here.
func Served(kinds *credential.Registry, fragments []apidoc.Fragment) ([]byte, error) {
	raw, err := JSON()
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if err := apidoc.Merge(doc, fragments); err != nil {
		return nil, err
	}
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	enum := func(name string, values []string) error {
		s, ok := schemas[name].(map[string]any)
		if !ok {
			return fmt.Errorf("openapi.yaml: no schema %s", name)
		}
		s["enum"] = values
		return nil
	}
	if err := enum("CredentialKind", kinds.IntrospectedKinds()); err != nil {
		return nil, err
	}
	// Events beyond the kinds' own (a leak report's, a policy change's) stay as written.
	events := kinds.Events()
	for _, e := range schemas["EventType"].(map[string]any)["enum"].([]any) {
		events = append(events, e.(string))
	}
	slices.Sort(events)
	if err := enum("EventType", slices.Compact(events)); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// Module serves the document.
var Module = fx.Module("api", httpserver.AsRoutes(func(kinds *credential.Registry, f apidoc.Fragments) ([]httpserver.Route, error) {
	doc, err := Served(kinds, f.All)
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
