package apptest

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/alexedwards/argon2id"
	"go.uber.org/fx"
)

// CheapHashing swaps argon2id's OWASP cost for a tiny one. Every test app uses it: the
// algorithm and code path are the real ones, only the memory and time cost shrink, which
// keeps the race-detector run of hundreds of sign-ins fast. TestOWASPParams in the account
// module checks what production uses.
var CheapHashing = fx.Decorate(func(argon2id.Params) argon2id.Params {
	return argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}
})

var seq atomic.Int64

// UniqueEmail returns an address no other test in this binary uses.
func UniqueEmail(t testing.TB) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("u%d-%s@example.com", seq.Add(1), name)
}

// Session is a signed-in user as the API returned it.
type Session struct {
	UserID        string
	Email         string
	Password      string
	SessionHandle string
	AccessToken   string
	RefreshToken  string
	Cookies       []*http.Cookie
}

// Bearer is the Authorization header value for the session.
func (s *Session) Bearer() map[string]string {
	return map[string]string{"Authorization": "Bearer " + s.AccessToken}
}

// SignUp creates a dashboard user through the API and returns its first session.
func (a *App) SignUp(t testing.TB) *Session {
	t.Helper()
	return a.SignUpIn(t, "")
}

// SignUpIn creates a user in tenant (dashboard when "") and returns its session.
func (a *App) SignUpIn(t testing.TB, tenant string) *Session {
	t.Helper()
	email, password := UniqueEmail(t), "correct horse battery"
	body := map[string]any{"email": email, "password": password, "name": "Test User"}
	if tenant != "" {
		body["tenantId"] = tenant
	}
	r := a.Do(Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: body})
	if r.Status != http.StatusCreated {
		t.Fatalf("sign-up: %d %s", r.Status, r.Body)
	}
	var out struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		Session struct {
			SessionHandle string `json:"sessionHandle"`
			AccessToken   string `json:"accessToken"`
			RefreshToken  string `json:"refreshToken"`
		} `json:"session"`
	}
	r.Decode(t, &out)
	return &Session{
		UserID: out.User.ID, Email: email, Password: password,
		SessionHandle: out.Session.SessionHandle, AccessToken: out.Session.AccessToken, RefreshToken: out.Session.RefreshToken,
		Cookies: (&http.Response{Header: r.Header}).Cookies(),
	}
}

// DumpDB returns every row of every table as text, for tests that check no secret is
// stored in plain text. Binary columns are included as raw bytes, so a stored plaintext
// would show up whatever its column type.
func (a *App) DumpDB(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	var q string
	if a.Store == "postgres" {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
	} else {
		q = "SELECT name FROM sqlite_master WHERE type = 'table'"
	}
	tables := queryStrings(t, a.DB.SQL, q)
	var b strings.Builder
	for _, table := range tables {
		rows, err := a.DB.SQL.QueryContext(ctx, fmt.Sprintf(`SELECT * FROM %q`, table))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			b.WriteString(table)
			for _, v := range vals {
				switch x := v.(type) {
				case []byte:
					b.WriteString("|" + string(x))
				default:
					fmt.Fprintf(&b, "|%v", x)
				}
			}
			b.WriteString("\n")
		}
		rows.Close()
	}
	return b.String()
}

func queryStrings(t testing.TB, db *sql.DB, q string) []string {
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// CreateProject creates a project owned (as admin) by s and returns its id.
func (a *App) CreateProject(t testing.TB, s *Session) string {
	t.Helper()
	r := a.Do(Req{Method: http.MethodPost, Path: "/v1/projects", Body: map[string]any{"name": "Project " + t.Name()[:min(len(t.Name()), 60)]}, Header: s.Bearer()})
	if r.Status != http.StatusCreated {
		t.Fatalf("create project: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

// AddMember adds member to project with role, as admin.
func (a *App) AddMember(t testing.TB, admin *Session, project string, member *Session, role string) {
	t.Helper()
	r := a.Do(Req{Method: http.MethodPost, Path: "/v1/projects/" + project + "/members", Body: map[string]any{"userId": member.UserID, "role": role}, Header: admin.Bearer()})
	if r.Status != http.StatusCreated {
		t.Fatalf("add member: %d %s", r.Status, r.Body)
	}
}
