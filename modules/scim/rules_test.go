package scim_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	entuser "github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
)

func patchOps(ops ...map[string]any) map[string]any {
	return map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"}, "Operations": ops}
}

// Each rule of RFC 7644 the endpoints hold to, one case each, with the requests a broken
// or hostile client sends: every refusal is an RFC 7644 §3.12 body with its scimType,
// never a 500, and a refused write changes nothing.
func TestSCIMRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		var ids []string
		for _, n := range []string{"a", "b", "c"} {
			ids = append(ids, w.scim(http.MethodPost, "/Users", user(n+"@acme.example", nil)).Expect(t, 201, nil)["id"].(string))
		}
		first := "/Users/" + ids[0]

		bodies := map[string]struct {
			body     any
			scimType string
		}{
			"missing body":                 {nil, "invalidSyntax"},
			"empty body":                   {"  ", "invalidSyntax"},
			"unparsable JSON":              {`{"userName": "x@acme.example",`, "invalidSyntax"},
			"a list, not an object":        {`[{"userName": "x@acme.example"}]`, "invalidSyntax"},
			"JSON null":                    {`null`, "invalidSyntax"},
			"userName missing":             {map[string]any{"emails": []any{map[string]any{"value": "x@acme.example"}}}, "invalidValue"},
			"userName empty":               {map[string]any{"userName": " "}, "invalidValue"},
			"userName a number":            {map[string]any{"userName": 7}, "invalidValue"},
			"active neither bool nor True": {user("x@acme.example", map[string]any{"active": "maybe"}), "invalidValue"},
			"emails not objects":           {user("x@acme.example", map[string]any{"emails": []any{"x@acme.example"}}), "invalidValue"},
			"name not an object":           {user("x@acme.example", map[string]any{"name": "Ada"}), "invalidValue"},
			"schemas not a list":           {user("x@acme.example", map[string]any{"schemas": "urn:x"}), "invalidValue"},
			"extension not an object":      {user("x@acme.example", map[string]any{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": "x"}), "invalidValue"},
			"no address anywhere":          {map[string]any{"userName": "not-an-address"}, "invalidValue"},
		}
		for name, c := range bodies {
			t.Run("POST: "+name, func(t *testing.T) {
				scimError(t, w.scim(http.MethodPost, "/Users", c.body), 400, c.scimType)
			})
		}
		t.Run("POST: a body over 64 KiB", func(t *testing.T) {
			r := w.scim(http.MethodPost, "/Users", user("big@acme.example", map[string]any{"title": strings.Repeat("x", 70<<10)}))
			if r.Status != 413 {
				t.Fatalf("status %d", r.Status)
			}
		})
		t.Run("POST: an unknown attribute is ignored, the password never kept", func(t *testing.T) {
			got := w.scim(http.MethodPost, "/Users", user("d@acme.example", map[string]any{"shoeSize": 44, "password": "hunter2"})).Expect(t, 201, nil)
			if _, ok := got["shoeSize"]; ok || got["password"] != nil || strings.Contains(string(w.scim(http.MethodGet, "/Users/"+got["id"].(string), nil).Body), "hunter2") {
				t.Fatalf("kept: %v", got)
			}
			w.scim(http.MethodDelete, "/Users/"+got["id"].(string), nil).Expect(t, 204, nil)
		})
		t.Run("POST: Entra's active \"False\" creates the person deprovisioned", func(t *testing.T) {
			got := w.scim(http.MethodPost, "/Users", user("e@acme.example", map[string]any{"active": "False"})).Expect(t, 201, map[string]any{"active": false})
			r, err := w.ent.SCIMResource.Get(t.Context(), got["id"].(string))
			if err != nil || !w.deprovisioned(t, *r.UserID) {
				t.Fatalf("not deprovisioned: %v", err)
			}
			w.scim(http.MethodDelete, "/Users/"+got["id"].(string), nil).Expect(t, 204, nil)
		})

		filters := map[string]string{
			"unfinished":            `userName eq`,
			"unknown operator":      `userName xx "a"`,
			"unbalanced":            `(userName eq "a"`,
			"a bare word":           `ada`,
			"gt on a boolean":       `active gt true`,
			"co with null":          `title co null`,
			"unclosed value filter": `emails[type eq "work"`,
		}
		for name, f := range filters {
			t.Run("filter: "+name, func(t *testing.T) {
				scimError(t, w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(f), nil), 400, "invalidFilter")
			})
		}
		t.Run("filter: over 4096 characters", func(t *testing.T) {
			f := strings.Repeat(`userName eq "a" or `, 300) + `userName eq "b"`
			scimError(t, w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(f), nil), 400, "invalidFilter")
		})
		t.Run("filter: attribute names without case, values of userName without case", func(t *testing.T) {
			w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(`USERNAME Eq "B@ACME.EXAMPLE" and EMAILS.VALUE sw "b@"`), nil).
				Expect(t, 200, map[string]any{"totalResults": 1})
			w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(`id eq "`+strings.ToUpper(ids[1])+`"`), nil).Expect(t, 200, map[string]any{"totalResults": 0})
		})

		// Paging: 1-based; boundaries ±1 around the three Users.
		paging := []struct {
			query      string
			start, n   int
			firstIndex int // index into ids of the first returned, -1 for none
		}{
			{"", 1, 3, 0},
			{"startIndex=0", 1, 3, 0},
			{"startIndex=-5", 1, 3, 0},
			{"startIndex=1&count=1", 1, 1, 0},
			{"startIndex=2&count=1", 2, 1, 1},
			{"startIndex=3", 3, 1, 2},
			{"startIndex=4", 4, 0, -1},
			{"count=0", 1, 0, -1},
			{"count=-1", 1, 0, -1},
			{"count=2", 1, 2, 0},
			{"count=3", 1, 3, 0},
			{"count=4", 1, 3, 0},
			{"count=100000", 1, 3, 0},
			{"startIndex=2&count=2&filter=" + url.QueryEscape(`userName pr`), 2, 2, 1},
			{"startIndex=3&count=2&filter=" + url.QueryEscape(`userName pr`), 3, 1, 2},
			{"startIndex=4&filter=" + url.QueryEscape(`userName pr`), 4, 0, -1},
		}
		for _, p := range paging {
			t.Run("paging: "+p.query, func(t *testing.T) {
				got := w.scim(http.MethodGet, "/Users?"+p.query, nil).Expect(t, 200, map[string]any{"totalResults": 3, "startIndex": p.start, "itemsPerPage": p.n})
				res := got["Resources"].([]any)
				if len(res) != p.n || (p.firstIndex >= 0 && res[0].(map[string]any)["id"] != ids[p.firstIndex]) {
					t.Fatalf("resources %v", res)
				}
			})
		}
		for _, q := range []string{"startIndex=one", "count=1.5", "count=" + strconv.Itoa(1<<62) + "0"} {
			t.Run("paging: "+q, func(t *testing.T) {
				scimError(t, w.scim(http.MethodGet, "/Users?"+q, nil), 400, "invalidValue")
			})
		}

		patches := map[string]struct {
			body     any
			status   int
			scimType string
		}{
			"no Operations":                {map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"}}, 400, "invalidSyntax"},
			"Operations not a list":        {map[string]any{"Operations": map[string]any{"op": "add"}}, 400, "invalidSyntax"},
			"no operation":                 {patchOps(), 400, "invalidSyntax"},
			"an operation not an object":   {map[string]any{"Operations": []any{"replace"}}, 400, "invalidSyntax"},
			"op move":                      {patchOps(map[string]any{"op": "move", "path": "title", "value": "x"}), 400, "invalidSyntax"},
			"unknown path":                 {patchOps(map[string]any{"op": "replace", "path": "nickNames", "value": "x"}), 400, "invalidPath"},
			"unknown sub-attribute":        {patchOps(map[string]any{"op": "replace", "path": "name.nickName", "value": "x"}), 400, "invalidPath"},
			"unparsable path":              {patchOps(map[string]any{"op": "replace", "path": `emails[type eq`, "value": "x"}), 400, "invalidPath"},
			"path not a string":            {patchOps(map[string]any{"op": "replace", "path": 7, "value": "x"}), 400, "invalidPath"},
			"unknown schema in the path":   {patchOps(map[string]any{"op": "replace", "path": "urn:example:Shoes:size", "value": "44"}), 400, "invalidPath"},
			"remove without a path":        {patchOps(map[string]any{"op": "remove"}), 400, "noTarget"},
			"replace what no filter finds": {patchOps(map[string]any{"op": "replace", "path": `emails[value co "nowhere"].value`, "value": "x@acme.example"}), 400, "noTarget"},
			"a value path on a single":     {patchOps(map[string]any{"op": "replace", "path": `name[givenName eq "Ada"].familyName`, "value": "x"}), 400, "invalidPath"},
			"another id":                   {patchOps(map[string]any{"op": "replace", "value": map[string]any{"id": "scr_other"}}), 400, "mutability"},
			"the id by path":               {patchOps(map[string]any{"op": "replace", "path": "id", "value": "scr_other"}), 400, "mutability"},
			"groups are read-only":         {patchOps(map[string]any{"op": "add", "path": "groups", "value": []any{map[string]any{"value": "x"}}}), 400, "mutability"},
			"active not a boolean":         {patchOps(map[string]any{"op": "replace", "path": "active", "value": "sometimes"}), 400, "invalidValue"},
			"no value to replace with":     {patchOps(map[string]any{"op": "replace", "path": "title"}), 400, "invalidValue"},
			"no path, value not an object": {patchOps(map[string]any{"op": "replace", "value": false}), 400, "invalidValue"},
			"userName removed":             {patchOps(map[string]any{"op": "remove", "path": "userName"}), 400, "invalidValue"},
			"a userName another User has":  {patchOps(map[string]any{"op": "replace", "path": "userName", "value": "B@acme.example"}), 409, "uniqueness"},
			"a good op, then a broken one": {patchOps(map[string]any{"op": "replace", "path": "title", "value": "CEO"}, map[string]any{"op": "replace", "path": "nope", "value": 1}), 400, "invalidPath"},
			"unparsable JSON":              {`{"Operations": [`, 400, "invalidSyntax"},
			"missing body":                 {nil, 400, "invalidSyntax"},
		}
		for name, c := range patches {
			t.Run("PATCH: "+name, func(t *testing.T) {
				scimError(t, w.scim(http.MethodPatch, first, c.body), c.status, c.scimType)
			})
		}
		// None of the refused PATCHes changed the User.
		w.scim(http.MethodGet, first, nil).Expect(t, 200, map[string]any{"meta": map[string]any{"resourceType": "User", "version": `W/"1"`,
			"created": w.scim(http.MethodGet, first, nil).JSON(t)["meta"].(map[string]any)["created"], "lastModified": w.scim(http.MethodGet, first, nil).JSON(t)["meta"].(map[string]any)["lastModified"],
			"location": w.scim(http.MethodGet, first, nil).JSON(t)["meta"].(map[string]any)["location"]}})

		t.Run("PATCH: paths and no paths", func(t *testing.T) {
			got := w.scim(http.MethodPatch, first, patchOps(
				map[string]any{"op": "add", "path": "emails", "value": []any{map[string]any{"value": "a.home@elsewhere.example", "type": "home"}}},
				map[string]any{"op": "replace", "path": `emails[type eq "home"].display`, "value": "Home"},
				map[string]any{"op": "Add", "value": map[string]any{"title": "CEO", "name.middleName": "B", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": map[string]any{"employeeNumber": "42"}}},
				map[string]any{"op": "remove", "path": `emails[type eq "work"]`},
				map[string]any{"op": "replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value", "value": ids[1]},
			)).Expect(t, 200, map[string]any{"title": "CEO", "emails": []any{map[string]any{"value": "a.home@elsewhere.example", "type": "home", "display": "Home"}},
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": map[string]any{"employeeNumber": "42", "manager": map[string]any{"value": ids[1]}}})
			if n := got["name"].(map[string]any); n["middleName"] != "B" || n["givenName"] != "Ada" {
				t.Fatalf("name %v", n)
			}
			schemas := got["schemas"].([]any)
			if len(schemas) != 2 {
				t.Fatalf("schemas %v", schemas)
			}
			w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "42"`), nil).
				Expect(t, 200, map[string]any{"totalResults": 1})
			w.scim(http.MethodPatch, first, patchOps(map[string]any{"op": "remove", "path": "title"})).Expect(t, 200, nil)
		})

		t.Run("PUT: another id", func(t *testing.T) {
			scimError(t, w.scim(http.MethodPut, first, user("a@acme.example", map[string]any{"id": ids[1]})), 400, "mutability")
		})
		t.Run("If-Match with an old version", func(t *testing.T) {
			r := w.a.Do(apptest.Req{Method: http.MethodPatch, Path: w.base + first, Body: patchOps(map[string]any{"op": "replace", "path": "title", "value": "x"}),
				Header: map[string]string{"Authorization": "Bearer " + w.token, "If-Match": `W/"1"`}})
			scimError(t, r, 412, "")
			cur := w.scim(http.MethodGet, first, nil)
			r = w.a.Do(apptest.Req{Method: http.MethodPatch, Path: w.base + first, Body: patchOps(map[string]any{"op": "replace", "path": "title", "value": "x"}),
				Header: map[string]string{"Authorization": "Bearer " + w.token, "If-Match": cur.Header.Get("ETag")}})
			r.Expect(t, 200, map[string]any{"title": "x"})
		})
		t.Run("unknown resources", func(t *testing.T) {
			scimError(t, w.scim(http.MethodGet, "/Users/scr_nope", nil), 404, "")
			scimError(t, w.scim(http.MethodDelete, "/Users/scr_nope", nil), 404, "")
			scimError(t, w.scim(http.MethodPatch, "/Users/scr_nope", patchOps(map[string]any{"op": "remove", "path": "title"})), 404, "")
			// A User is not a Group.
			scimError(t, w.scim(http.MethodGet, "/Groups/"+ids[0], nil), 404, "")
		})
		t.Run("a group's member must be a User of the directory", func(t *testing.T) {
			scimError(t, w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "G", "members": []any{map[string]any{"value": "scr_nope"}}}), 400, "invalidValue")
			scimError(t, w.scim(http.MethodPost, "/Groups", map[string]any{"members": []any{}}), 400, "invalidValue")
			w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "G"}).Expect(t, 201, nil)
			scimError(t, w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "g"}), 409, "uniqueness")
		})
		t.Run("attributes and excludedAttributes", func(t *testing.T) {
			got := w.scim(http.MethodGet, first+"?attributes=userName", nil).Expect(t, 200, nil)
			if len(got) != 3 || got["userName"] == nil || got["id"] == nil {
				t.Fatalf("attributes=userName: %v", got)
			}
			got = w.scim(http.MethodGet, first+"?excludedAttributes=emails,name.givenName", nil).Expect(t, 200, nil)
			if got["emails"] != nil || got["name"] != nil || got["userName"] == nil {
				t.Fatalf("excluded: %v", got)
			}
		})
		t.Run("discovery", func(t *testing.T) {
			w.scim(http.MethodGet, "/ServiceProviderConfig", nil).Expect(t, 200, map[string]any{"patch": map[string]any{"supported": true}, "bulk": map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0}})
			w.scim(http.MethodGet, "/ResourceTypes", nil).Expect(t, 200, map[string]any{"totalResults": 2})
			w.scim(http.MethodGet, "/ResourceTypes/User", nil).Expect(t, 200, map[string]any{"schema": "urn:ietf:params:scim:schemas:core:2.0:User",
				"schemaExtensions": []any{map[string]any{"schema": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "required": false}}})
			w.scim(http.MethodGet, "/Schemas", nil).Expect(t, 200, map[string]any{"totalResults": 3})
			w.scim(http.MethodGet, "/Schemas/urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", nil).Expect(t, 200, map[string]any{"name": "EnterpriseUser"})
			scimError(t, w.scim(http.MethodGet, "/Schemas/urn:nope", nil), 404, "")
			scimError(t, w.scim(http.MethodGet, "/ResourceTypes/Shoe", nil), 404, "")
		})
	})
}

// An IdP retrying in parallel: the same User created at once by several requests is
// created once; the others are 409 uniqueness, never a 500, and nothing is half-written.
func TestConcurrentCreates(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		const n = 6
		statuses := make(chan int, n)
		for i := 0; i < n; i++ {
			go func() {
				statuses <- w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.base + "/Users", Body: user("race@acme.example", nil),
					Header: map[string]string{"Authorization": "Bearer " + w.token}}).Status
			}()
		}
		created := 0
		for i := 0; i < n; i++ {
			switch s := <-statuses; s {
			case 201:
				created++
			case 409:
			default:
				t.Errorf("status %d", s)
			}
		}
		if created != 1 {
			t.Fatalf("%d created", created)
		}
		if n, err := w.ent.User.Query().Where(entuser.TenantID(w.project), entuser.Email("race@acme.example")).Count(t.Context()); err != nil || n != 1 {
			t.Fatalf("%d accounts: %v", n, err)
		}
		w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(`userName eq "race@acme.example"`), nil).Expect(t, 200, map[string]any{"totalResults": 1})
	})
}
