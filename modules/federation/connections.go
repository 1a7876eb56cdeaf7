package federation

import (
	"context"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/federationflow"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
)

// An org's connections (SPEC §26) are sign-in providers of the project's tenant bound to
// the org: the ways in its ssoRequired admits and home-realm discovery sends its people
// to. The routes are mounted once per kind of admin: each mount names its guard and how
// it reads the project and org a request is for.

// orgScope reads the project (its tenant) and org a request is for, once its guard admitted it.
type orgScope func(c *fiber.Ctx) (tenant, orgID string)

// projectOrg is the scope of project admins' routes: /v1/projects/{id}/orgs/{orgId}/….
func projectOrg(c *fiber.Ctx) (string, string) {
	return guard.ProjectOf(c), strings.Clone(c.Params("orgId"))
}

// connectionRoutes mounts the connection routes at prefix behind guards, every change
// also behind recent.
func (h *handler) connectionRoutes(prefix string, scope orgScope, recent func(fiber.Handler) fiber.Handler, guards ...fiber.Handler) []httpserver.Route {
	r := func(method, path string, last fiber.Handler) httpserver.Route {
		return httpserver.Route{Method: method, Path: path, Handlers: append(append([]fiber.Handler{}, guards...), last)}
	}
	c := connections{h: h, scope: scope}
	one := prefix + "/:providerId"
	return []httpserver.Route{
		r(http.MethodGet, prefix, c.list),
		r(http.MethodPost, prefix, recent(c.create)),
		r(http.MethodGet, one, c.get),
		r(http.MethodPatch, one, recent(c.patch)),
		r(http.MethodDelete, one, recent(c.remove)),
		r(http.MethodPost, one+"/test", recent(c.startTest)),
		r(http.MethodGet, one+"/test/:testId", c.testResult),
		r(http.MethodPost, one+"/metadata/refresh", recent(c.refreshMetadata)),
	}
}

type connections struct {
	h     *handler
	scope orgScope
}

var (
	errOrgNotFound        = apperr.New(apperr.KindNotFound, "org_not_found", "no such organization in this project")
	errConnectionNotFound = apperr.New(apperr.KindNotFound, "connection_not_found", "no such connection of this organization")
)

// org is the request's project and org, the org checked to be the project's.
func (c connections) org(ctx context.Context, fc *fiber.Ctx) (string, string, error) {
	tenant, orgID := c.scope(fc)
	if c.h.svc.orgList == nil {
		return "", "", errOrgNotFound
	}
	ok, err := c.h.svc.orgList.OrgExists(ctx, tenant, orgID)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", errOrgNotFound
	}
	return tenant, orgID, nil
}

// connection is the org's connection the path names; another's is not found.
func (c connections) connection(fc *fiber.Ctx) (Provider, error) {
	ctx := fc.UserContext()
	tenant, orgID, err := c.org(ctx, fc)
	if err != nil {
		return Provider{}, err
	}
	p, err := c.h.svc.store.getIn(ctx, tenant, strings.Clone(fc.Params("providerId")))
	if err == errProviderNotFound || (err == nil && p.OrgID != orgID) {
		return Provider{}, errConnectionNotFound
	}
	return p, err
}

var errNotSAML = apperr.Conflict("not_saml", "only a SAML connection has IdP metadata to read again")

// refreshMetadata is POST …/connections/{id}/metadata/refresh: a SAML connection's IdP
// metadata read again from its URL now (SPEC §27), as the periodic refresh would.
func (c connections) refreshMetadata(fc *fiber.Ctx) error {
	s, ok, err := c.samlOf(fc)
	if !ok {
		if _, err := c.connection(fc); err != nil {
			return err
		}
		return errNotSAML
	}
	if err != nil {
		return err
	}
	s, err = c.h.svc.saml.admin.refresh(fc.UserContext(), s, true, change(fc))
	if err != nil {
		return err
	}
	return fc.JSON(c.h.svc.saml.admin.view(s))
}

// samlOf is the org's SAML connection the path names, when it names one (ok).
func (c connections) samlOf(fc *fiber.Ctx) (samlConn, bool, error) {
	id := fc.Params("providerId")
	if !strings.HasPrefix(id, schema.SAMLConnectionIDPrefix) {
		return samlConn{}, false, nil
	}
	ctx := fc.UserContext()
	tenant, orgID, err := c.org(ctx, fc)
	if err != nil {
		return samlConn{}, true, err
	}
	s, err := c.h.svc.saml.admin.get(ctx, tenant, strings.Clone(id))
	if err == nil && s.OrgID != orgID {
		err = errConnectionNotFound
	}
	return s, true, err
}

func (c connections) list(fc *fiber.Ctx) error {
	ctx := fc.UserContext()
	tenant, orgID, err := c.org(ctx, fc)
	if err != nil {
		return err
	}
	vs, err := c.h.svc.admin.views(ctx, tenant)
	if err != nil {
		return err
	}
	out := []any{}
	for _, v := range vs {
		if v.OrgID != nil && *v.OrgID == orgID {
			out = append(out, v)
		}
	}
	sc, err := c.h.svc.saml.admin.list(ctx, tenant, orgID)
	if err != nil {
		return err
	}
	for _, s := range sc {
		out = append(out, c.h.svc.saml.admin.view(s))
	}
	return fc.JSON(fiber.Map{"connections": out})
}

// create is POST …/connections { type: oidc, …SPEC §20's provider body } or { type: saml,
// …SPEC §27's }: 201 the connection.
func (c connections) create(fc *fiber.Ctx) error {
	ctx := fc.UserContext()
	f := jsonbody.Read(fc.Body())
	t, st := f.String("type")
	if st != jsonbody.OK || (t != "oidc" && t != "saml") {
		f.Fail("type", "required: oidc or saml")
	}
	if err := f.Err(); err != nil {
		return err
	}
	tenant, orgID, err := c.org(ctx, fc)
	if err != nil {
		return err
	}
	if t == "saml" {
		v, err := c.h.svc.saml.admin.create(ctx, tenant, orgID, fc.Body(), change(fc))
		if err != nil {
			return err
		}
		return fc.Status(http.StatusCreated).JSON(v)
	}
	v, err := c.h.svc.admin.create(ctx, tenant, orgID, fc.Body(), change(fc))
	if err != nil {
		return err
	}
	return fc.Status(http.StatusCreated).JSON(v)
}

func (c connections) get(fc *fiber.Ctx) error {
	if s, ok, err := c.samlOf(fc); ok {
		if err != nil {
			return err
		}
		return fc.JSON(c.h.svc.saml.admin.view(s))
	}
	p, err := c.connection(fc)
	if err != nil {
		return err
	}
	v, err := c.h.svc.admin.viewOne(fc.UserContext(), p)
	if err != nil {
		return err
	}
	return fc.JSON(v)
}

// patch changes the fields the body names, as PATCH …/auth/providers/{id} does; its
// type and org stay.
func (c connections) patch(fc *fiber.Ctx) error {
	if s, ok, err := c.samlOf(fc); ok {
		if err != nil {
			return err
		}
		v, err := c.h.svc.saml.admin.update(fc.UserContext(), s, fc.Body(), change(fc))
		if err != nil {
			return err
		}
		return fc.JSON(v)
	}
	p, err := c.connection(fc)
	if err != nil {
		return err
	}
	f := jsonbody.Read(fc.Body())
	if t, st := f.String("type"); st != jsonbody.Absent && t != p.Type {
		f.Fail("type", "a connection's type cannot change")
	}
	if err := f.Err(); err != nil {
		return err
	}
	v, err := c.h.svc.admin.UpdateProvider(fc.UserContext(), p.TenantID, p.ID, fc.Body(), change(fc))
	if err != nil {
		return err
	}
	return fc.JSON(v)
}

func (c connections) remove(fc *fiber.Ctx) error {
	if s, ok, err := c.samlOf(fc); ok {
		if err != nil {
			return err
		}
		if err := c.h.svc.saml.admin.remove(fc.UserContext(), s, change(fc)); err != nil {
			return err
		}
		return fc.JSON(fiber.Map{"ok": true, "id": s.ID})
	}
	p, err := c.connection(fc)
	if err != nil {
		return err
	}
	if err := c.h.svc.admin.DeleteProvider(fc.UserContext(), p.TenantID, p.ID, change(fc)); err != nil {
		return err
	}
	return fc.JSON(fiber.Map{"ok": true, "id": p.ID})
}

var errTestNotFound = apperr.New(apperr.KindNotFound, "test_not_found", "no such test of this connection, or it expired")

// startTest is POST …/connections/{providerId}/test: 201 { testId, url, expiresAt }. The
// url signs in once at the org's IdP (in any browser); its callback answers what the IdP
// said, mapped (subject, email, emailVerified, emailTrusted, name), and signs no one in
// nor makes anyone; the admin reads the same at GET …/test/{testId} until it expires.
func (c connections) startTest(fc *fiber.Ctx) error {
	if s, ok, err := c.samlOf(fc); ok {
		if err != nil {
			return err
		}
		st, err := c.h.svc.saml.login(fc.UserContext(), s, "", "", federationflow.PurposeTest)
		if err != nil {
			return err
		}
		return fc.Status(http.StatusCreated).JSON(fiber.Map{"testId": st.ID, "url": st.URL, "expiresAt": c.h.svc.clock.Now().Add(flowTTL).UTC()})
	}
	p, err := c.connection(fc)
	if err != nil {
		return err
	}
	st, err := c.h.svc.begin(fc.UserContext(), p, "", "", federationflow.PurposeTest, nil)
	if err != nil {
		return err
	}
	return fc.Status(http.StatusCreated).JSON(fiber.Map{"testId": st.ID, "url": st.URL, "expiresAt": c.h.svc.clock.Now().Add(flowTTL).UTC()})
}

// testResult is GET …/connections/{providerId}/test/{testId}: pending until the callback,
// then done with the mapped answer.
func (c connections) testResult(fc *fiber.Ctx) error {
	var p Provider
	if s, ok, err := c.samlOf(fc); ok {
		if err != nil {
			return err
		}
		p.ID = s.ID
	} else if p, err = c.connection(fc); err != nil {
		return err
	}
	ctx := fc.UserContext()
	id := strings.Clone(fc.Params("testId"))
	f, err := c.h.svc.ent.FederationFlow.Query().Where(federationflow.ID(id), federationflow.ProviderID(p.ID),
		federationflow.PurposeEQ(federationflow.PurposeTest), federationflow.ExpiresAtGT(c.h.svc.clock.Now())).Only(ctx)
	if ent.IsNotFound(err) {
		return errTestNotFound
	}
	if err != nil {
		return err
	}
	if f.TestResult == nil {
		return fc.JSON(fiber.Map{"testId": f.ID, "status": "pending", "result": nil})
	}
	return fc.JSON(fiber.Map{"testId": f.ID, "status": "done", "result": f.TestResult})
}
