package apptest

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/authcore/authcore/api"
	"github.com/authcore/authcore/internal/testkit"
)

var (
	docOnce sync.Once
	doc     *openapi3.T
	router  routers.Router
	docErr  error
)

// Document is api/openapi.yaml, loaded and validated as OpenAPI once per test binary.
func Document(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	docOnce.Do(func() {
		var raw []byte
		if raw, docErr = api.JSON(); docErr != nil {
			return
		}
		if doc, docErr = openapi3.NewLoader().LoadFromData(raw); docErr != nil {
			return
		}
		if docErr = doc.Validate(context.Background()); docErr != nil {
			return
		}
		router, docErr = gorillamux.NewRouter(doc)
	})
	if docErr != nil {
		t.Fatalf("api/openapi.yaml: %v", docErr)
	}
	return doc, router
}

// conform fails the test when a response does not match the OpenAPI document: an
// undocumented route (anything but the 404/405 of a route that does not exist, and the
// routes under /test/ that tests add for themselves), an undocumented status, or a body
// that breaks its schema.
func conform(t testing.TB, req *http.Request, res *testkit.Response) {
	t.Helper()
	if strings.HasPrefix(req.URL.Path, "/test/") { // routes a test adds for itself
		return
	}
	_, r := Document(t)
	route, params, err := r.FindRoute(req)
	if err != nil {
		if res.Status != http.StatusNotFound && res.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s answered %d but is not in api/openapi.yaml", req.Method, req.URL.Path, res.Status)
		}
		return
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.Status, Header: res.Header, Options: opts}
	out.SetBodyBytes(res.Body)
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		body := string(res.Body)
		if len(body) > 400 {
			body = body[:400] + "…"
		}
		why := strings.ReplaceAll(err.Error(), "\n", " ")
		if i := strings.Index(why, "Schema:"); i > 0 { // the failing field is enough, not the whole schema
			why = why[:i]
		}
		t.Errorf("%s %s answered %d, which api/openapi.yaml does not allow: %s\nbody: %s", req.Method, req.URL.Path, res.Status, why, body)
	}
}
