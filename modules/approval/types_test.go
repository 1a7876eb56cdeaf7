package approval_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// A project's admins register the types of details its agents may ask for, each with a
// JSON Schema checked by a JSON Schema library; members list them (SPEC §23).
func TestDetailTypeRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		path := "/v1/projects/" + w.project + "/oauth/authorization-details"
		post := func(body any) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: w.admin.Bearer()})
		}
		obj := json.RawMessage(`{"type":"object","properties":{"type":{"type":"string"},"n":{"type":"integer"}}}`)
		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"no body", nil, ""},
			{"not an object", `[1]`, ""},
			{"no type", map[string]any{"name": "N", "schema": obj}, "type"},
			{"a type of capitals", map[string]any{"type": "Pay", "name": "N", "schema": obj}, "type"},
			{"a type with a slash", map[string]any{"type": "https://x/pay", "name": "N", "schema": obj}, "type"},
			{"a type of 65 characters", map[string]any{"type": "p" + strings.Repeat("a", 64), "name": "N", "schema": obj}, "type"},
			{"no name", map[string]any{"type": "t1", "schema": obj}, "name"},
			{"a name of 81 characters", map[string]any{"type": "t1", "name": strings.Repeat("n", 81), "schema": obj}, "name"},
			{"a name with a format character", map[string]any{"type": "t1", "name": "Pay\u202e", "schema": obj}, "name"},
			{"no schema", map[string]any{"type": "t1", "name": "N"}, "schema"},
			{"a schema that is a string", map[string]any{"type": "t1", "name": "N", "schema": "object"}, "schema"},
			{"a schema not of an object", map[string]any{"type": "t1", "name": "N", "schema": json.RawMessage(`{"type":"string"}`)}, "schema"},
			{"a schema without properties", map[string]any{"type": "t1", "name": "N", "schema": json.RawMessage(`{"type":"object"}`)}, "schema"},
			{"an invalid JSON Schema", map[string]any{"type": "t1", "name": "N", "schema": json.RawMessage(`{"type":"object","properties":{"a":{"type":"nothing"}}}`)}, "schema"},
			{"a schema reading a file", map[string]any{"type": "t1", "name": "N", "schema": json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)}, "schema"},
			{"a schema fetching a URL", map[string]any{"type": "t1", "name": "N", "schema": json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`)}, "schema"},
			{"a schema of 16 KiB and one byte", map[string]any{"type": "t1", "name": "N", "schema": json.RawMessage(`{"type":"object","properties":{"a":{"description":"` + strings.Repeat("x", 16<<10) + `"}}}`)}, "schema"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := post(c.body)
				got := r.Expect(t, 400, map[string]any{"code": "validation_failed"})
				if c.field != "" && !strings.Contains(string(r.Body), `"field":"`+c.field+`"`) {
					t.Fatalf("issues name no %s: %v", c.field, got)
				}
			})
		}
		post(map[string]any{"type": "payment_initiation", "name": "Again", "schema": obj}).Expect(t, 409, map[string]any{"code": "type_taken"})
		created := post(map[string]any{"type": "account_information", "name": "Read accounts", "schema": obj}).Expect(t, 201, map[string]any{"type": "account_information"})
		if created["schema"].(map[string]any)["type"] != "object" {
			t.Fatalf("schema: %v", created)
		}
		// Members read; only admins change; a stranger sees nothing.
		viewer := w.a.SignUp(t)
		w.a.AddMember(t, w.admin, w.project, viewer, "viewer")
		list := w.a.Do(apptest.Req{Path: path, Header: viewer.Bearer()}).Expect(t, 200, nil)["types"].([]any)
		if len(list) != 2 || list[0].(map[string]any)["type"] != "payment_initiation" {
			t.Fatalf("list: %v", list)
		}
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: map[string]any{"type": "t2", "name": "N", "schema": obj}, Header: viewer.Bearer()}).Expect(t, 403, nil)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: path + "/account_information", Header: viewer.Bearer()}).Expect(t, 403, nil)
		w.a.Do(apptest.Req{Path: path, Header: w.a.SignUp(t).Bearer()}).Expect(t, 403, nil)
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: path + "/nothing", Body: map[string]any{"name": "N", "schema": obj}, Header: w.admin.Bearer()}).
			Expect(t, 404, nil)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: path + "/nothing", Header: w.admin.Bearer()}).Expect(t, 404, nil)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: path + "/account_information", Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"type": "account_information"})
	})
}
