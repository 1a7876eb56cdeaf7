package scim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
)

// handler serves the directories' admin routes (/v1) and the SCIM endpoints (/scim/v2).
type handler struct {
	dirs  *Directories
	res   *Resources
	guard *guard.Guard
}

// groupBodyLimit lets an IdP send a large group's members in one request.
const groupBodyLimit = 1 << 20

func (h handler) routes() []httpserver.Route {
	var routes []httpserver.Route
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	// The project's admins, and the org's owners and its setup sessions for directory: a
	// directory deprovisions any account of the org's domains, owners included.
	for _, at := range []struct {
		prefix string
		guards []fiber.Handler
	}{
		{"/v1/projects/:id/orgs/:orgId/directories", admin},
		{"/v1/auth-core/orgs/:orgId/directories", []fiber.Handler{h.guard.OrgOwner(guard.IntentDirectory)}},
	} {
		r := func(method, path string, f fiber.Handler) httpserver.Route {
			return httpserver.Route{Method: method, Path: path, Handlers: append(append([]fiber.Handler{}, at.guards...), f)}
		}
		one := at.prefix + "/:directoryId"
		routes = append(routes,
			r(http.MethodGet, at.prefix, h.list),
			r(http.MethodPost, at.prefix, h.guard.Recently(h.create)),
			r(http.MethodGet, one, h.get),
			r(http.MethodPatch, one, h.guard.Recently(h.update)),
			r(http.MethodDelete, one, h.guard.Recently(h.remove)),
			r(http.MethodPost, one+"/token", h.guard.Recently(h.roll)),
		)
	}
	const base = "/scim/v2/:directoryId"
	s := func(method, path string, f fiber.Handler, limit int) httpserver.Route {
		return httpserver.Route{Method: method, Path: base + path, Handlers: []fiber.Handler{asSCIM, h.authenticate, f}, BodyLimit: limit}
	}
	routes = append(routes,
		s(http.MethodGet, "/ServiceProviderConfig", h.serviceProviderConfig, 0),
		s(http.MethodGet, "/ResourceTypes", h.resourceTypes, 0),
		s(http.MethodGet, "/ResourceTypes/:name", h.resourceType, 0),
		s(http.MethodGet, "/Schemas", h.schemas, 0),
		s(http.MethodGet, "/Schemas/:uri", h.schema, 0),
	)
	for _, rt := range []*resourceType{userType, groupType} {
		limit := 0
		if rt == groupType {
			limit = groupBodyLimit
		}
		rt := rt
		routes = append(routes,
			s(http.MethodGet, rt.Endpoint, func(c *fiber.Ctx) error { return h.listResources(c, rt) }, 0),
			s(http.MethodPost, rt.Endpoint, func(c *fiber.Ctx) error { return h.createResource(c, rt) }, limit),
			s(http.MethodGet, rt.Endpoint+"/:resourceId", func(c *fiber.Ctx) error { return h.getResource(c, rt) }, 0),
			s(http.MethodPut, rt.Endpoint+"/:resourceId", func(c *fiber.Ctx) error { return h.replaceResource(c, rt) }, limit),
			s(http.MethodPatch, rt.Endpoint+"/:resourceId", func(c *fiber.Ctx) error { return h.patchResource(c, rt) }, limit),
			s(http.MethodDelete, rt.Endpoint+"/:resourceId", func(c *fiber.Ctx) error { return h.deleteResource(c, rt) }, 0),
		)
	}
	return routes
}

func actorOf(c *fiber.Ctx) Actor {
	a := Actor{ID: guard.ActorOf(c), Project: guard.ProjectOf(c), Origin: httpserver.Origin(c)}
	if _, ok := guard.SetupOf(c); ok {
		a.Type = audit.ActorSetupLink
	}
	return a
}

// readDirectory reads { name?, groupRoles? }; creating takes only the name.
func readDirectory(body []byte, creating bool) (name *string, roles map[string]string, err error) {
	if creating && len(strings.TrimSpace(string(body))) == 0 {
		return nil, nil, nil
	}
	f := jsonbody.Read(body)
	for k := range f.Object {
		if k != "name" && (creating || k != "groupRoles") {
			f.Fail(k, "not a field of a directory")
		}
	}
	switch v, st := f.String("name"); st {
	case jsonbody.OK:
		v = strings.TrimSpace(v)
		if v == "" || len(v) > 80 {
			f.Fail("name", "1 to 80 characters")
		}
		name = &v
	case jsonbody.Absent:
	default:
		f.Fail("name", "must be a string")
	}
	if raw, st := f.RawObject("groupRoles"); st == jsonbody.OK {
		if err := json.Unmarshal(raw, &roles); err != nil {
			f.Fail("groupRoles", "must map group displayNames to role names (strings)")
		} else if len(roles) > 100 {
			f.Fail("groupRoles", "at most 100 groups")
		}
	} else if st != jsonbody.Absent {
		f.Fail("groupRoles", "must be an object")
	}
	return name, roles, f.Err()
}

func (h handler) create(c *fiber.Ctx) error {
	name, _, err := readDirectory(c.Body(), true)
	if err != nil {
		return err
	}
	n := "SCIM directory"
	if name != nil {
		n = *name
	}
	d, token, err := h.dirs.Create(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), n)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"directory": d, "id": d.ID, "baseUrl": d.BaseURL, "token": token})
}

func (h handler) list(c *fiber.Ctx) error {
	out, err := h.dirs.List(c.UserContext(), guard.ProjectOf(c), c.Params("orgId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"directories": out})
}

func (h handler) get(c *fiber.Ctx) error {
	d, err := h.dirs.Get(c.UserContext(), guard.ProjectOf(c), c.Params("orgId"), c.Params("directoryId"))
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (h handler) update(c *fiber.Ctx) error {
	name, roles, err := readDirectory(c.Body(), false)
	if err != nil {
		return err
	}
	if name == nil && roles == nil {
		return apperr.Validation(apperr.Issue{Field: "body", Reason: "give name or groupRoles"})
	}
	d, err := h.dirs.Update(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), strings.Clone(c.Params("directoryId")), name, roles)
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (h handler) roll(c *fiber.Ctx) error {
	d, token, err := h.dirs.Roll(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), strings.Clone(c.Params("directoryId")))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"directory": d, "id": d.ID, "baseUrl": d.BaseURL, "token": token})
}

func (h handler) remove(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("directoryId"))
	if err := h.dirs.Delete(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "id": id})
}

type callKey struct{}

// authenticate admits the directory's own live token (Authorization: Bearer ac_scim_…).
func (h handler) authenticate(c *fiber.Ctx) error {
	tok := httpserver.BearerToken(c.Get(fiber.HeaderAuthorization))
	dir, err := h.dirs.Authenticate(c.UserContext(), c.Params("directoryId"), tok)
	if err != nil {
		return err
	}
	c.Locals(callKey{}, call{dir: dir, origin: httpserver.Origin(c)})
	return c.Next()
}

func callOf(c *fiber.Ctx) call { return c.Locals(callKey{}).(call) }

// send answers v as application/scim+json.
func send(c *fiber.Ctx, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.Status(status)
	c.Set(fiber.HeaderContentType, httpserver.SCIMContentType)
	return c.Send(b)
}

// sendResource answers a resource with its ETag (RFC 7644 §3.14).
func sendResource(c *fiber.Ctx, status int, doc map[string]any) error {
	if m, ok := doc["meta"].(map[string]any); ok {
		if v, ok := m["version"].(string); ok {
			c.Set(fiber.HeaderETag, v)
		}
		if l, ok := m["location"].(string); ok && status == http.StatusCreated {
			c.Set(fiber.HeaderLocation, l)
		}
	}
	return send(c, status, doc)
}

// page reads startIndex and count (RFC 7644 §3.4.2.4): 1-based, below 1 is 1; a
// negative count is 0, above maxCount is maxCount; not an integer is 400 invalidValue.
func page(c *fiber.Ctx) (Page, error) {
	p := Page{StartIndex: 1, Count: defaultCount}
	for _, q := range []struct {
		name string
		to   *int
	}{{"startIndex", &p.StartIndex}, {"count", &p.Count}} {
		raw := c.Query(q.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			return Page{}, scimErr(400, "invalidValue", q.name+" must be an integer")
		}
		*q.to = n
	}
	p.StartIndex = max(p.StartIndex, 1)
	p.Count = min(max(p.Count, 0), maxCount)
	return p, nil
}

// project keeps the attributes a client asked for (attributes) or drops those it did not
// want (excludedAttributes), top-level names only; id and schemas always stay.
func project(c *fiber.Ctx, doc map[string]any) {
	keep, drop := names(c.Query("attributes")), names(c.Query("excludedAttributes"))
	for k := range doc {
		if k == "id" || k == "schemas" {
			continue
		}
		lk := strings.ToLower(k)
		if (len(keep) > 0 && !keep[lk]) || drop[lk] {
			delete(doc, k)
		}
	}
}

// names are a comma-separated list's attribute names, lower-cased, each cut to its
// top-level attribute (name.givenName is name; an extension's URN stays whole).
func names(list string) map[string]bool {
	out := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if strings.HasPrefix(n, "urn:") {
			if i := strings.LastIndexByte(n, ':'); i > 0 && strings.HasPrefix(n[:i], enterpriseLower) {
				n = enterpriseLower
			}
		} else if i := strings.IndexByte(n, '.'); i > 0 {
			n = n[:i]
		}
		out[n] = true
	}
	return out
}

var enterpriseLower = strings.ToLower(enterpriseSchema)

func (h handler) listResources(c *fiber.Ctx, rt *resourceType) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	out, err := h.res.List(c.UserContext(), callOf(c), rt, strings.Clone(c.Query("filter")), p)
	if err != nil {
		return err
	}
	for _, r := range out["Resources"].([]any) {
		project(c, r.(map[string]any))
	}
	return send(c, http.StatusOK, out)
}

func (h handler) getResource(c *fiber.Ctx, rt *resourceType) error {
	doc, err := h.res.Get(c.UserContext(), callOf(c), rt, c.Params("resourceId"))
	if err != nil {
		return err
	}
	project(c, doc)
	return sendResource(c, http.StatusOK, doc)
}

func (h handler) createResource(c *fiber.Ctx, rt *resourceType) error {
	doc, err := h.res.Create(c.UserContext(), callOf(c), rt, c.Body())
	if err != nil {
		return err
	}
	return sendResource(c, http.StatusCreated, doc)
}

func (h handler) replaceResource(c *fiber.Ctx, rt *resourceType) error {
	doc, err := h.res.Replace(c.UserContext(), callOf(c), rt, strings.Clone(c.Params("resourceId")), c.Body(), strings.Clone(c.Get(fiber.HeaderIfMatch)))
	if err != nil {
		return err
	}
	return sendResource(c, http.StatusOK, doc)
}

func (h handler) patchResource(c *fiber.Ctx, rt *resourceType) error {
	doc, err := h.res.Patch(c.UserContext(), callOf(c), rt, strings.Clone(c.Params("resourceId")), c.Body(), strings.Clone(c.Get(fiber.HeaderIfMatch)))
	if err != nil {
		return err
	}
	return sendResource(c, http.StatusOK, doc)
}

func (h handler) deleteResource(c *fiber.Ctx, rt *resourceType) error {
	if err := h.res.Delete(c.UserContext(), callOf(c), rt, strings.Clone(c.Params("resourceId"))); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}
