package account_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/account"
)

func usersPath(project string) string { return "/v1/projects/" + project + "/users" }

// A project admin creates, finds, reads and edits the project's people (SPEC §25); they
// sign in to the project's tenant, and no other project's admin reaches them.
func TestProjectPeople(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		do := func(method, path string, body any) *apptest.Response {
			return a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: admin.Bearer()})
		}
		ada := do(http.MethodPost, usersPath(project), map[string]any{"email": " Ada@Example.COM", "password": "analytical engine",
			"metadata": map[string]any{"name": "Ada Lovelace", "plan": "pro", "seats": 9007199254740993, "prefs": map[string]any{"theme": "dark", "lang": "en"}}}).
			Expect(t, 201, map[string]any{"email": "ada@example.com", "tenantId": project, "emailVerified": false, "name": "Ada Lovelace",
				"blocked": false, "blockedAt": nil, "hasPassword": true})
		adaID := ada["id"].(string)
		grace := do(http.MethodPost, usersPath(project), map[string]any{"email": "grace@navy.example", "emailVerified": true}).
			Expect(t, 201, map[string]any{"emailVerified": true, "hasPassword": false, "name": nil, "metadata": map[string]any{}})
		do(http.MethodPost, usersPath(project), map[string]any{"email": "ADA@example.com", "password": "another one!"}).Expect(t, 409, map[string]any{"code": "email_taken"})

		// The person signs in to the project's tenant with the password the admin set.
		signedIn := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": "ada@example.com", "password": "analytical engine", "tenantId": project}}).
			Expect(t, 200, nil)
		if u := signedIn["user"].(map[string]any); u["id"] != adaID || u["tenantId"] != project || u["name"] != "Ada Lovelace" {
			t.Errorf("signed in as %v", u)
		}

		ids := func(r map[string]any) []string {
			var out []string
			for _, u := range r["users"].([]any) {
				out = append(out, u.(map[string]any)["id"].(string))
			}
			return out
		}
		find := func(q string) []string {
			return ids(do(http.MethodGet, usersPath(project)+"?query="+url.QueryEscape(q), nil).Expect(t, 200, nil))
		}
		for q, want := range map[string][]string{"ADA@": {adaID}, "gra": {grace["id"].(string)}, "ada love": {adaID}, "lovelace": nil, "example": nil, "": {grace["id"].(string), adaID}} {
			if got := find(q); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("query %q found %v, want %v", q, got, want)
			}
		}
		do(http.MethodGet, usersPath(project)+"?query="+strings.Repeat("a", 201), nil).Expect(t, 400, map[string]any{"code": "invalid_query"})
		// Pages of one, newest first, follow the cursor to the end.
		first := do(http.MethodGet, usersPath(project)+"?limit=1", nil).Expect(t, 200, nil)
		second := do(http.MethodGet, usersPath(project)+"?limit=1&cursor="+first["nextCursor"].(string), nil).Expect(t, 200, map[string]any{"nextCursor": nil})
		if got := append(ids(first), ids(second)...); fmt.Sprint(got) != fmt.Sprint([]string{grace["id"].(string), adaID}) {
			t.Errorf("pages: %v", got)
		}
		for _, limit := range []string{"0", "-5", "abc", "1e9"} {
			do(http.MethodGet, usersPath(project)+"?limit="+limit, nil).Expect(t, 200, nil)
		}

		// metadata merges (RFC 7396): members replace, null removes, objects merge, and a
		// large integer is kept digit for digit.
		const merged = `{"name":"Ada Lovelace","prefs":{"lang":"fr","theme":"dark"},"seats":9007199254740993,"team":"eng"}`
		r := do(http.MethodPatch, usersPath(project)+"/"+adaID, map[string]any{"metadata": map[string]any{"plan": nil, "prefs": map[string]any{"lang": "fr"}, "team": "eng"}})
		r.Expect(t, 200, nil)
		if !strings.Contains(string(r.Body), `"metadata":`+merged) {
			t.Errorf("merged metadata: %s, want %s", r.Body, merged)
		}
		if stored := a.Ent.User.Query().Where(user.ID(adaID)).OnlyX(t.Context()).Metadata; stored != merged {
			t.Errorf("stored metadata %s, want %s", stored, merged)
		}
		// A new address is unproven unless the admin says otherwise.
		do(http.MethodPatch, usersPath(project)+"/"+grace["id"].(string), map[string]any{"email": "grace@hopper.example"}).
			Expect(t, 200, map[string]any{"email": "grace@hopper.example", "emailVerified": false})
		do(http.MethodPatch, usersPath(project)+"/"+grace["id"].(string), map[string]any{"email": "ada@example.com"}).Expect(t, 409, map[string]any{"code": "email_taken"})
		do(http.MethodGet, usersPath(project)+"/"+grace["id"].(string), nil).Expect(t, 200, map[string]any{"email": "grace@hopper.example"})

		// Another project's admin reaches none of it; this project's path names no user of another.
		other := a.SignUp(t)
		otherProject := a.CreateProject(t, other)
		a.Do(apptest.Req{Method: http.MethodGet, Path: usersPath(project), Header: other.Bearer()}).Expect(t, 403, nil)
		a.Do(apptest.Req{Method: http.MethodPatch, Path: usersPath(project) + "/" + adaID, Body: map[string]any{"blocked": true}, Header: other.Bearer()}).Expect(t, 403, nil)
		a.Do(apptest.Req{Method: http.MethodGet, Path: usersPath(otherProject) + "/" + adaID, Header: other.Bearer()}).Expect(t, 404, map[string]any{"code": "not_found"})
		do(http.MethodGet, usersPath(project)+"/"+admin.UserID, nil).Expect(t, 404, map[string]any{"code": "not_found"})
		// A developer of the project is refused.
		member := a.SignUp(t)
		a.AddMember(t, admin, project, member, "developer")
		a.Do(apptest.Req{Method: http.MethodGet, Path: usersPath(project), Header: member.Bearer()}).Expect(t, 403, nil)

		actions := auditActions(t, a, admin, project)
		for _, want := range []string{"user.create", "user.update"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit has no %s: %s", want, actions)
			}
		}
	})
}

func auditActions(t *testing.T, a *apptest.App, admin *apptest.Session, project string) string {
	t.Helper()
	r := a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/projects/" + project + "/audit?limit=200", Header: admin.Bearer()}).Expect(t, 200, nil)
	var out []string
	for _, e := range r["events"].([]any) {
		out = append(out, e.(map[string]any)["action"].(string))
	}
	return strings.Join(out, " ")
}

// Each rule of a new person's body has its own case, and a refused body writes nothing.
func TestProjectPeopleRefusals(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	post := func(body any) *apptest.Response {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project), Body: body, Header: admin.Bearer()})
	}
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing body", nil, "body"},
		{"unparsable body", "{", "body"},
		{"an array", []any{}, "body"},
		{"no email", map[string]any{"password": "long enough"}, "email"},
		{"email not a string", map[string]any{"email": 5}, "email"},
		{"not an address", map[string]any{"email": "nobody"}, "email"},
		{"password 7 characters", map[string]any{"email": "a@x.example", "password": "1234567"}, "password"},
		{"password 257 characters", map[string]any{"email": "a@x.example", "password": strings.Repeat("p", 257)}, "password"},
		{"password not a string", map[string]any{"email": "a@x.example", "password": 12345678}, "password"},
		{"password and hash", map[string]any{"email": "a@x.example", "password": "long enough", "passwordHash": "$2a$04$abc"}, "passwordHash"},
		{"unknown hash", map[string]any{"email": "a@x.example", "passwordHash": "$md5$abc"}, "passwordHash"},
		{"plain text as a hash", map[string]any{"email": "a@x.example", "passwordHash": "hunter22"}, "passwordHash"},
		{"hash not a string", map[string]any{"email": "a@x.example", "passwordHash": true}, "passwordHash"},
		{"emailVerified a string", map[string]any{"email": "a@x.example", "emailVerified": "yes"}, "emailVerified"},
		{"emailVerified null", map[string]any{"email": "a@x.example", "emailVerified": nil}, "emailVerified"},
		{"metadata a list", map[string]any{"email": "a@x.example", "metadata": []any{1}}, "metadata"},
		{"metadata a string", map[string]any{"email": "a@x.example", "metadata": "{}"}, "metadata"},
		{"metadata number beyond a double", map[string]any{"email": "a@x.example", "metadata": json.RawMessage(`{"plan":1e400}`)}, "metadata"},
		{"metadata over 16 KiB", map[string]any{"email": "a@x.example", "metadata": map[string]any{"x": strings.Repeat("m", 16<<10)}}, "metadata"},
		{"unknown field", map[string]any{"email": "a@x.example", "passwordhash": "$2a$04$abc"}, "passwordhash"},
		{"name is metadata's", map[string]any{"email": "a@x.example", "name": "A"}, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := post(c.body).Expect(t, 400, map[string]any{"code": "validation_failed"})
			issues, _ := json.Marshal(got["issues"])
			if !strings.Contains(string(issues), `"field":"`+c.field+`"`) {
				t.Errorf("issues %s do not name %s", issues, c.field)
			}
		})
	}
	// The boundaries that pass: 8 and 256 characters, metadata just under the limit.
	post(map[string]any{"email": "eight@x.example", "password": "12345678"}).Expect(t, 201, nil)
	post(map[string]any{"email": "long@x.example", "password": strings.Repeat("p", 256), "metadata": map[string]any{"x": strings.Repeat("m", 16<<10-8)}}).Expect(t, 201, nil)
	if n := a.Ent.User.Query().Where(user.TenantID(project)).CountX(t.Context()); n != 2 {
		t.Fatalf("%d users in the tenant after the refusals, want the 2 accepted", n)
	}

	person := post(map[string]any{"email": "patch@x.example"}).Expect(t, 201, nil)["id"].(string)
	patch := func(body any) *apptest.Response {
		return a.Do(apptest.Req{Method: http.MethodPatch, Path: usersPath(project) + "/" + person, Body: body, Header: admin.Bearer()})
	}
	for name, body := range map[string]any{"missing body": nil, "unparsable": "{", "blocked a string": map[string]any{"blocked": "true"},
		"email a number": map[string]any{"email": 1}, "bad email": map[string]any{"email": "x"}, "metadata null": map[string]any{"metadata": nil},
		"password is not patched": map[string]any{"password": "long enough"}, "emailVerified null": map[string]any{"emailVerified": nil}} {
		t.Run("patch "+name, func(t *testing.T) { patch(body).Expect(t, 400, map[string]any{"code": "validation_failed"}) })
	}
	a.Do(apptest.Req{Method: http.MethodPatch, Path: usersPath(project) + "/usr_nope", Body: map[string]any{"blocked": true}, Header: admin.Bearer()}).Expect(t, 404, nil)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: usersPath(project) + "/usr_nope", Header: admin.Bearer()}).Expect(t, 404, nil)
	if got := a.Ent.User.GetX(t.Context(), person); got.BlockedAt != nil || got.Email != "patch@x.example" {
		t.Fatal("a refused PATCH changed the user")
	}
}

// A blocked person is refused by every way in at once: sessions end on every replica,
// grants end, and sign-in answers 403 user_blocked, but only to whoever knows the
// password. Unblocking lets them sign in again; nothing ended comes back.
func TestBlockedPerson(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		person := a.SignUpIn(t, project)
		signin := func(pw string) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": person.Email, "password": pw, "tenantId": project}})
		}
		second := signin(person.Password).Expect(t, 200, nil)["session"].(map[string]any)
		path := usersPath(project) + "/" + person.UserID
		a.Do(apptest.Req{Method: http.MethodPatch, Path: path, Body: map[string]any{"blocked": true}, Header: admin.Bearer()}).
			Expect(t, 200, map[string]any{"blocked": true})
		for _, refresh := range []string{person.RefreshToken, second["refreshToken"].(string)} {
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": refresh}}).Expect(t, 401, nil)
		}
		a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/session/me", Header: person.Bearer()}).Expect(t, 401, nil)
		signin(person.Password).Expect(t, 403, map[string]any{"code": "user_blocked"})
		signin(person.Password+"!").Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		// Blocking again records no second block (and ends whatever is left, here nothing).
		a.Do(apptest.Req{Method: http.MethodPatch, Path: path, Body: map[string]any{"blocked": true}, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"blocked": true})
		actions := auditActions(t, a, admin, project)
		if strings.Count(actions, "user.block") != 1 {
			t.Errorf("audit: %s", actions)
		}
		a.Do(apptest.Req{Method: http.MethodPatch, Path: path, Body: map[string]any{"blocked": false}, Header: admin.Bearer()}).
			Expect(t, 200, map[string]any{"blocked": false, "blockedAt": nil})
		signin(person.Password).Expect(t, 200, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": person.RefreshToken}}).Expect(t, 401, nil)
		if !strings.Contains(auditActions(t, a, admin, project), "user.unblock") {
			t.Error("no user.unblock in the audit")
		}
	})
}

// Deleting a person revokes their sessions and removes them; the address is free again.
func TestDeletePerson(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		person := a.SignUpIn(t, project)
		path := usersPath(project) + "/" + person.UserID
		a.Do(apptest.Req{Method: http.MethodDelete, Path: path, Header: admin.Bearer()}).
			Expect(t, 200, map[string]any{"ok": true, "userId": person.UserID, "sessionsRevoked": 1})
		a.Do(apptest.Req{Method: http.MethodGet, Path: path, Header: admin.Bearer()}).Expect(t, 404, nil)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: path, Header: admin.Bearer()}).Expect(t, 404, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": person.RefreshToken}}).Expect(t, 401, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": person.Email, "password": person.Password, "tenantId": project}}).
			Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project), Body: map[string]any{"email": person.Email, "password": "a new start"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		if !strings.Contains(auditActions(t, a, admin, project), "user.delete") {
			t.Error("no user.delete in the audit")
		}
	})
}

// Ten thousand people exported from other systems, each scheme's hashes made by its own
// library, arrive in one JSON Lines request; malformed lines are reported by number and
// nothing of them is written; people of every scheme then sign in with their original
// passwords and are re-hashed to argon2id.
func TestImportTenThousand(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project), Body: map[string]any{"email": "taken@import.example"}, Header: admin.Bearer()}).Expect(t, 201, nil)

		const pw = "original pw"
		hashes := account.ImportedHashes(t, pw)
		schemes := []string{"bcrypt-2a", "bcrypt-2b", "bcrypt-2y", "argon2id", "scrypt", "pbkdf2-sha256", "pbkdf2-sha512", "firebase-scrypt"}
		hashes["firebase-scrypt"] = account.FirebaseVector
		var body strings.Builder
		bad := map[int]string{ // line → the code its report must name
			17: "validation_failed", 2000: "validation_failed", 4321: "validation_failed", 7777: "email_taken", 9000: "email_taken", 10003: "validation_failed",
		}
		const total = 10_006
		for line := 1; line <= total; line++ {
			var l string
			switch line {
			case 17:
				l = `{"email": "broken@import.example", "passwordHash": `
			case 2000:
				l = `{"email": "nohash@import.example", "passwordHash": "$md5$x$y"}`
			case 4321:
				l = `["not", "an", "object"]`
			case 7777:
				l = `{"email": "TAKEN@import.example"}`
			case 9000:
				l = `{"email": "person1@import.example"}` // the address of line 1
			case 10003:
				l = `{"email": "meta@import.example", "metadata": "not an object"}`
			default:
				scheme := schemes[line%len(schemes)]
				b, _ := json.Marshal(map[string]any{"email": fmt.Sprintf("person%d@import.example", line), "passwordHash": hashes[scheme],
					"emailVerified": true, "metadata": map[string]any{"name": fmt.Sprintf("Person %d", line), "from": scheme}})
				l = string(b)
			}
			body.WriteString(l + "\r\n")
			if line == 5000 {
				body.WriteString("\n") // a blank line is no line of the report, but is counted
			}
		}
		start := time.Now()
		r := a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project) + "/import", Body: body.String(),
			Header: map[string]string{"Authorization": admin.Bearer()["Authorization"], "Content-Type": "application/x-ndjson"}})
		took := time.Since(start)
		got := r.Expect(t, 200, map[string]any{"imported": total - len(bad), "failed": len(bad)})
		t.Logf("%s: %d lines (%d KiB) imported in %v: %.0f users a minute", st.Name, total, body.Len()>>10, took, float64(total-len(bad))/took.Minutes())
		lines := got["lines"].([]any)
		if len(lines) != total {
			t.Fatalf("%d report lines, want %d", len(lines), total)
		}
		for _, raw := range lines {
			l := raw.(map[string]any)
			n := int(l["line"].(float64))
			if n > 5000 {
				n-- // the blank line
			}
			want, refused := bad[n]
			switch e, _ := l["error"].(map[string]any); {
			case refused && (e == nil || e["code"] != want):
				t.Errorf("line %d: %v, want refused with %s", n, l, want)
			case !refused && (e != nil || !strings.HasPrefix(fmt.Sprint(l["userId"]), "usr_")):
				t.Errorf("line %d: %v, want a user", n, l)
			}
		}
		if n := a.Ent.User.Query().Where(user.TenantID(project)).CountX(t.Context()); n != total-len(bad)+1 {
			t.Fatalf("%d users in the tenant, want %d", n, total-len(bad)+1)
		}
		for _, email := range []string{"broken@import.example", "nohash@import.example", "meta@import.example"} {
			if a.Ent.User.Query().Where(user.TenantID(project), user.Email(email)).ExistX(t.Context()) {
				t.Errorf("the refused line of %s was written", email)
			}
		}
		// People of every scheme sign in with the password they had, and are re-hashed.
		for i, scheme := range schemes {
			line := len(schemes)*10 + i // line%len(schemes) == i
			email, password := fmt.Sprintf("person%d@import.example", line), pw
			if scheme == "firebase-scrypt" {
				password = "user1password"
			}
			signin := func(pw string) *apptest.Response {
				return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": email, "password": pw, "tenantId": project}})
			}
			signin(password+"x").Expect(t, 401, nil)
			u := signin(password).Expect(t, 200, nil)["user"].(map[string]any)
			if u["email"] != email || u["tenantId"] != project || u["name"] != fmt.Sprintf("Person %d", line) || u["emailVerified"] != true {
				t.Errorf("%s: signed in as %v", scheme, u)
			}
			if h := a.Ent.User.Query().Where(user.Email(email), user.TenantID(project)).OnlyX(t.Context()).PasswordHash; !strings.HasPrefix(h, "$argon2id$") || (scheme != "argon2id" && h == hashes[scheme]) {
				t.Errorf("%s: stored hash after sign-in %.20s…", scheme, h)
			}
		}
		if !strings.Contains(auditActions(t, a, admin, project), "user.import") {
			t.Error("no user.import in the audit")
		}
		// The log never holds a hash or a password.
		if logs := a.Logs.String(); strings.Contains(logs, hashes["scrypt"]) || strings.Contains(logs, pw) {
			t.Error("the log holds a password or a hash")
		}
	})
}

// The import route alone takes a body over the server's 64 KiB: the same 100 KiB is
// refused unread by the route that creates one person, and by sign-in.
func TestImportBodyLimitIsThatRoutes(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	var lines strings.Builder
	for i := 0; lines.Len() < 100<<10; i++ {
		fmt.Fprintf(&lines, `{"email":"big%d@limit.example","metadata":{"pad":"%s"}}`+"\n", i, strings.Repeat("x", 200))
	}
	big := lines.String()
	a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project), Body: big, Header: admin.Bearer()}).Expect(t, 413, nil)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: `{"email":"a@b.c","password":"` + strings.Repeat("p", 100<<10) + `"}`}).Expect(t, 413, nil)
	a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project) + "/import?x=1", Body: big, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"failed": 0})
	// Over the import's own 16 MiB.
	a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project) + "/import", Body: strings.Repeat(big, 170), Header: admin.Bearer()}).Expect(t, 413, nil)
}

// Only a request that carries a credential is given the import's larger limit: fasthttp
// allocates the declared length before anyone is authenticated.
func TestImportLimitNeedsACredential(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	big := `{"email":"x@limit.example","metadata":{"pad":"` + strings.Repeat("x", 100<<10) + `"}}`
	a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project) + "/import", Body: big}).Expect(t, 413, nil)
	a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project) + "/import", Body: big, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"failed": 1})
}
