package lifecycle

import (
	"regexp"
	"strings"

	"entgo.io/ent/schema/field"

	"github.com/authcore/authcore/platform/apidoc"
)

// Fragment is the OpenAPI description of a kind's routes as Module serves them, made from
// its schema: what the served document merges in, so a kind added as a module is
// documented with no edit to api/openapi.yaml (SPEC §15).
func (l *Lifecycle) Fragment(r Routes) apidoc.Fragment {
	name := pascal(l.spec.Name)
	ref := func(s string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + s} }
	obj := func(required []string, props map[string]any) map[string]any {
		return map[string]any{"type": "object", "required": required, "properties": props}
	}
	answer := func(description string, schema any) map[string]any {
		return map[string]any{"description": description, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
	}
	errors := map[string]any{"$ref": "#/components/responses/Error"}
	session := []any{map[string]any{"session": []any{}}}
	collection, item := openapiPath(r.Collection), openapiPath(r.Collection)+"/{"+r.ID+"}"
	project := map[string]any{"$ref": "#/components/parameters/idPath"}
	if strings.Contains(r.Collection, ":projectId") {
		project = map[string]any{"name": "projectId", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}
	}
	id := map[string]any{"name": r.ID, "in": "path", "required": true, "schema": map[string]any{"type": "string"}}
	tags := []any{l.spec.Name}
	op := func(id, summary string, security []any, extra map[string]any) map[string]any {
		o := map[string]any{"tags": tags, "operationId": id, "summary": summary, "security": security}
		for k, v := range extra {
			o[k] = v
		}
		return o
	}

	// The record, the mint body, and the answers with a secret.
	record := map[string]any{"id": map[string]any{"type": "string"}, "projectId": map[string]any{"type": "string"},
		"createdBy": ref("NullableString"), "createdAt": ref("Time"), "expiresAt": ref("NullableTime"),
		"lastUsedAt": ref("NullableTime"), "usage24h": ref("UsageTotals"), camel(l.t.mixin.HintColumn()): map[string]any{"type": "string"}}
	me := map[string]any{"authenticated": map[string]any{"type": "boolean", "const": true}, "kind": map[string]any{"type": "string", "const": l.spec.Name},
		"id": map[string]any{"type": "string"}, "projectId": map[string]any{"type": "string"}, "expiresAt": ref("NullableTime")}
	mint := map[string]any{"expiresInDays": map[string]any{"type": "integer", "minimum": minDays, "maximum": maxDays}}
	var own, mintRequired []string
	for _, c := range l.t.own {
		if c.desc.Sensitive {
			continue
		}
		n := camel(c.name)
		own = append(own, n)
		record[n], me[n] = c.schema(), c.schema()
		mint[n] = c.schema()
		if !c.nullable && c.desc.Default == nil && !c.strings {
			mintRequired = append(mintRequired, n)
		}
	}
	if l.t.mixin.ExpiresRequired {
		mintRequired = append(mintRequired, "expiresInDays")
	}
	recordRequired := append(append([]string{"id", "projectId"}, own...), "createdBy", "createdAt", "expiresAt", "lastUsedAt", "usage24h", camel(l.t.mixin.HintColumn()))
	created := obj([]string{"credential", "plaintext"}, map[string]any{"credential": ref(name), "plaintext": map[string]any{"type": "string", "pattern": "^" + regexp.QuoteMeta("ac_")}})
	schemas := map[string]any{
		name:             obj(recordRequired, record),
		name + "Mint":    map[string]any{"type": "object", "required": mintRequired, "properties": mint},
		name + "Created": created,
		name + "Me":      obj(append(append([]string{"authenticated", "kind", "id", "projectId"}, own...), "expiresAt"), me),
	}
	secret := camel(l.spec.Name) + "Secret"
	schemes := map[string]any{secret: map[string]any{"type": "http", "scheme": "bearer", "description": "A " + strings.ReplaceAll(l.spec.Name, "_", " ") + " secret (" + strings.Join(l.prefixes(), ", ") + ")."}}

	paths := map[string]any{
		collection: map[string]any{
			"parameters": []any{project},
			"get": op("list"+name+"s", "The project's live "+l.plural()+", newest first (admin).", session, map[string]any{"responses": map[string]any{
				"200": answer("Listed.", obj([]string{"credentials"}, map[string]any{"credentials": map[string]any{"type": "array", "items": ref(name)}})),
				"4XX": errors, "default": errors}}),
			"post": op("mint"+name, "Mint a "+l.singular()+"; its secret is answered once (admin, recent sign-in).", session, map[string]any{
				"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": ref(name + "Mint")}}},
				"responses":   map[string]any{"201": answer("Minted.", ref(name+"Created")), "4XX": errors, "default": errors}}),
		},
		item: map[string]any{
			"parameters": []any{project, id},
			"delete": op("revoke"+name, "Revoke one of the project's "+l.plural()+" (admin).", session, map[string]any{"responses": map[string]any{
				"200": answer("Revoked.", obj([]string{"ok", "id"}, map[string]any{"ok": map[string]any{"type": "boolean", "const": true}, "id": map[string]any{"type": "string"}})),
				"4XX": errors, "default": errors}}),
		},
		item + "/roll": map[string]any{
			"parameters": []any{project, id},
			"post": op("roll"+name, "A new secret for one of the project's "+l.plural()+"; the replaced one works until previousSecretExpiresAt (admin, recent sign-in).", session, map[string]any{
				"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": ref("RollRequest")}}},
				"responses": map[string]any{"200": answer("Rolled.", map[string]any{"allOf": []any{ref(name + "Created"), ref("PreviousSecret")}}),
					"4XX": errors, "default": errors}}),
		},
		openapiPath(r.Me): map[string]any{
			"get": op("get"+name+"Me", "Who a "+l.singular()+" secret belongs to.", []any{map[string]any{secret: []any{}}}, map[string]any{"responses": map[string]any{
				"200": answer("A live "+l.singular()+".", ref(name+"Me")), "4XX": errors, "default": errors}}),
		},
	}
	return apidoc.Fragment{Owner: l.spec.Name, Paths: paths, Components: map[string]map[string]any{"schemas": schemas, "securitySchemes": schemes}}
}

// schema is an own field's JSON schema.
func (c column) schema() map[string]any {
	var s map[string]any
	switch c.typ {
	case field.TypeString, field.TypeEnum:
		s = map[string]any{"type": "string"}
		if len(c.desc.Enums) > 0 {
			var vs []any
			for _, e := range c.desc.Enums {
				vs = append(vs, e.V)
			}
			s["enum"] = vs
		}
	case field.TypeJSON:
		if !c.strings {
			return map[string]any{}
		}
		s = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	case field.TypeBool:
		s = map[string]any{"type": "boolean"}
	case field.TypeFloat64:
		s = map[string]any{"type": "number"}
	case field.TypeTime:
		s = map[string]any{"type": "string", "format": "date-time"}
	default:
		s = map[string]any{"type": "integer"}
	}
	if c.nullable {
		s["type"] = []any{s["type"], "null"}
		if e, ok := s["enum"].([]any); ok {
			s["enum"] = append(e, nil)
		}
	}
	return s
}

// openapiPath is a Fiber path in OpenAPI's spelling: :id → {id}.
func openapiPath(p string) string { return fiberParam.ReplaceAllString(p, "{$1}") }

var fiberParam = regexp.MustCompile(`:([A-Za-z]+)`)

// pascal is a kind's name as a schema's: deploy_key → DeployKey.
func pascal(name string) string {
	c := camel(name)
	return strings.ToUpper(c[:1]) + c[1:]
}

func (l *Lifecycle) singular() string { return strings.ReplaceAll(l.spec.Name, "_", " ") }
func (l *Lifecycle) plural() string   { return l.singular() + "s" }

func (l *Lifecycle) prefixes() []string {
	out := make([]string, len(l.spec.Prefixes))
	for i, p := range l.spec.Prefixes {
		out[i] = "ac_" + p + "_…"
	}
	return out
}
