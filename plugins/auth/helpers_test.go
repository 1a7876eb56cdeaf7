package auth_test

import (
	"net/url"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// The OAuth vocabulary of internal/apptest, under short names.
type client = apptest.AuthClient

var (
	basic = apptest.Basic
)

func mint(t *testing.T, a *apptest.App, admin *apptest.Session, prj string, extra map[string]any) client {
	return a.MintAuthClient(t, admin, prj, extra)
}

func setup(t *testing.T, st apptest.Store) (*apptest.App, *apptest.Session, string) {
	a := apptest.Start(t, st)
	admin := a.SignUp(t)
	return a, admin, a.CreateProject(t, admin)
}

func verifyJWT(t *testing.T, a *apptest.App, token string) map[string]any {
	t.Helper()
	return a.VerifyAccessToken(t, token, "authcore")
}

func post(a *apptest.App, form url.Values, header map[string]string) *apptest.Response {
	return a.PostForm("/v1/oauth/token", form, header)
}
