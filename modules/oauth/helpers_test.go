package oauth_test

import (
	"net/url"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// The OAuth vocabulary of internal/apptest, under short names.
type client = apptest.AuthClient

var (
	basic    = apptest.Basic
	claimsOf = apptest.ClaimsOf
)

func mint(t *testing.T, a *apptest.App, admin *apptest.Session, prj string, extra map[string]any) client {
	return a.MintAuthClient(t, admin, prj, extra)
}

func setup(t *testing.T, st apptest.Store) (*apptest.App, *apptest.Session, string) {
	a := apptest.Start(t, st)
	admin := a.SignUp(t)
	return a, admin, a.CreateProject(t, admin)
}

func verifyJWTFor(t *testing.T, a *apptest.App, token, audience string) map[string]any {
	t.Helper()
	return a.VerifyAccessToken(t, token, audience)
}

func post(a *apptest.App, form url.Values, header map[string]string) *apptest.Response {
	return a.PostForm("/v1/oauth/token", form, header)
}

func postTo(a *apptest.App, path string, form url.Values, header map[string]string) *apptest.Response {
	return a.PostForm(path, form, header)
}

func basicFor(c client) map[string]string { return basic(c.ID, c.Secret) }

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
