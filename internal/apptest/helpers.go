package apptest

import (
	"context"
	"net/http"
	"testing"
)

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

// RegisterResource registers uri as a resource server of project (SPEC §11), as admin;
// tokens are issued only for registered resources. scopes may be nil.
func (a *App) RegisterResource(t testing.TB, admin *Session, project, uri string, scopes []string) map[string]any {
	t.Helper()
	body := map[string]any{"uri": uri, "name": "Resource " + uri}
	if scopes != nil {
		body["scopes"] = scopes
	}
	r := a.Do(Req{Method: http.MethodPost, Path: "/v1/projects/" + project + "/oauth/resources", Body: body, Header: admin.Bearer()})
	if r.Status != http.StatusCreated {
		t.Fatalf("register resource %s: %d %s", uri, r.Status, r.Body)
	}
	out := r.JSON(t)
	// A resource's URI is unique across projects, and the tests of a package share one
	// PostgreSQL database: a loopback port the OS hands to a later test's server must not
	// find this URI still taken. Removed in the store, not through the API: by then the
	// test may have moved its clock past the admin's token or its recent sign-in.
	if id, ok := out["id"].(string); ok {
		t.Cleanup(func() { _ = a.Ent.Resource.DeleteOneID(id).Exec(context.Background()) })
	}
	return out
}
