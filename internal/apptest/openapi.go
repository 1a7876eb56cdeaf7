package apptest

import (
	"context"
	"io"
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

// document is a loaded and validated OpenAPI document with its router.
type document struct {
	doc    *openapi3.T
	router routers.Router
	err    error
}

// documents caches loaded documents by their bytes: almost every app serves the same one.
var documents sync.Map // string → *document

func load(raw []byte) *document {
	if d, ok := documents.Load(string(raw)); ok {
		return d.(*document)
	}
	d := &document{}
	if d.doc, d.err = openapi3.NewLoader().LoadFromData(raw); d.err == nil {
		if d.err = d.doc.Validate(context.Background()); d.err == nil {
			d.router, d.err = gorillamux.NewRouter(d.doc)
		}
	}
	documents.Store(string(raw), d)
	return d
}

// Document is api/openapi.yaml as written, loaded and validated as OpenAPI.
func Document(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	raw, err := api.JSON()
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	d := load(raw)
	if d.err != nil {
		t.Fatalf("api/openapi.yaml: %v", d.err)
	}
	return d.doc, d.router
}

// Served is the document the app serves at /openapi.json (its enums filled from the
// app's registry), loaded and validated as OpenAPI.
func (a *App) Served(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	a.servedOnce.Do(func() {
		res, err := a.HTTP.Get(a.Base + "/openapi.json")
		if err != nil {
			a.served = &document{err: err}
			return
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			a.served = &document{err: err}
			return
		}
		a.served = load(raw)
	})
	if a.served.err != nil {
		t.Fatalf("/openapi.json: %v", a.served.err)
	}
	return a.served.doc, a.served.router
}

// Pages (the console, the authorization endpoint's error page) are documented as
// text/html strings; kin-openapi decodes only JSON, forms and text/plain by itself.
// SCIM messages (application/scim+json, RFC 7644 §3.1) are JSON.
func init() {
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/scim+json", openapi3filter.JSONBodyDecoder)
}

// conform fails the test when a response does not match the OpenAPI document the app
// serves: an
// undocumented route (anything but the 404/405 of a route that does not exist, and the
// routes under /test/ that tests add for themselves), an undocumented status, or a body
// that breaks its schema.
func (a *App) conform(t testing.TB, req *http.Request, res *testkit.Response) {
	t.Helper()
	if strings.HasPrefix(req.URL.Path, "/test/") { // routes a test adds for itself
		return
	}
	_, r := a.Served(t)
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
