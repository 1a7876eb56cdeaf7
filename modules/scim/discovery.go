package scim

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The discovery endpoints (RFC 7644 §4) describe what this server does, built from the
// same definitions requests are checked against.

func (h handler) base(c *fiber.Ctx) string { return h.res.selfURL + "/scim/v2/" + callOf(c).dir.ID }

func (h handler) serviceProviderConfig(c *fiber.Ctx) error {
	return send(c, http.StatusOK, map[string]any{
		"schemas":          []string{spcSchema},
		"documentationUri": h.res.selfURL + "/docs/scim",
		"patch":            map[string]any{"supported": true},
		"bulk":             map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":           map[string]any{"supported": true, "maxResults": maxCount},
		"changePassword":   map[string]any{"supported": false},
		"sort":             map[string]any{"supported": false},
		"etag":             map[string]any{"supported": true},
		"authenticationSchemes": []any{map[string]any{
			"type": "oauthbearertoken", "name": "Directory token", "primary": true,
			"description": "The directory's token (ac_scim_…), shown once when the directory is created or its token rolled.",
		}},
		"meta": map[string]any{"resourceType": "ServiceProviderConfig", "location": h.base(c) + "/ServiceProviderConfig"},
	})
}

func (h handler) resourceTypeDoc(c *fiber.Ctx, rt *resourceType) map[string]any {
	ext := []any{}
	for _, e := range rt.Extensions {
		ext = append(ext, map[string]any{"schema": e.ID, "required": false})
	}
	return map[string]any{
		"schemas": []string{rtSchema}, "id": rt.Name, "name": rt.Name, "endpoint": rt.Endpoint,
		"description": rt.Core.Desc, "schema": rt.Core.ID, "schemaExtensions": ext,
		"meta": map[string]any{"resourceType": "ResourceType", "location": h.base(c) + "/ResourceTypes/" + rt.Name},
	}
}

func (h handler) resourceTypes(c *fiber.Ctx) error {
	var out []any
	for _, rt := range []*resourceType{userType, groupType} {
		out = append(out, h.resourceTypeDoc(c, rt))
	}
	return send(c, http.StatusOK, map[string]any{"schemas": []string{listSchema}, "totalResults": len(out), "startIndex": 1, "itemsPerPage": len(out), "Resources": out})
}

func (h handler) resourceType(c *fiber.Ctx) error {
	for _, rt := range []*resourceType{userType, groupType} {
		if strings.EqualFold(rt.Name, c.Params("name")) {
			return send(c, http.StatusOK, h.resourceTypeDoc(c, rt))
		}
	}
	return scimErr(http.StatusNotFound, "", "no such resource type")
}

func attrDocs(attrs []attr) []any {
	out := make([]any, 0, len(attrs))
	for _, a := range attrs {
		d := map[string]any{
			"name": a.Name, "type": a.Type, "multiValued": a.Multi, "description": a.Desc, "required": a.Required,
			"caseExact": a.CaseExact, "mutability": orDefault(a.Mutability, "readWrite"), "returned": orDefault(a.Returned, "default"),
			"uniqueness": map[bool]string{true: "server", false: "none"}[a.Unique],
		}
		if a.Type == tComplex {
			d["subAttributes"] = attrDocs(a.Sub)
		}
		if a.Type == tReference {
			d["referenceTypes"] = []string{"external"}
		}
		out = append(out, d)
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (h handler) schemaDoc(c *fiber.Ctx, s schemaDef) map[string]any {
	return map[string]any{
		"schemas": []string{schemaSchema}, "id": s.ID, "name": s.Name, "description": s.Desc, "attributes": attrDocs(s.Attrs),
		"meta": map[string]any{"resourceType": "Schema", "location": h.base(c) + "/Schemas/" + s.ID},
	}
}

var allSchemas = []schemaDef{userDef, enterpriseDef, groupDef}

func (h handler) schemas(c *fiber.Ctx) error {
	var out []any
	for _, s := range allSchemas {
		out = append(out, h.schemaDoc(c, s))
	}
	return send(c, http.StatusOK, map[string]any{"schemas": []string{listSchema}, "totalResults": len(out), "startIndex": 1, "itemsPerPage": len(out), "Resources": out})
}

func (h handler) schema(c *fiber.Ctx) error {
	for _, s := range allSchemas {
		if strings.EqualFold(s.ID, c.Params("uri")) {
			return send(c, http.StatusOK, h.schemaDoc(c, s))
		}
	}
	return scimErr(http.StatusNotFound, "", "no such schema")
}
