package auth_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/authcore/authcore/internal/apptest"
)

// A roll gives the client a new secret under the same client id; x/oauth2's stock client
// gets tokens with either secret until the grace ends, then only with the new one.
func TestRollKeepsTheOldClientSecretForTheGrace(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		c := mint(t, a, admin, prj, nil)
		token := func(sec string) error {
			_, err := (&clientcredentials.Config{ClientID: c.ID, ClientSecret: sec, TokenURL: c.TokenURL}).Token(context.Background())
			return err
		}
		if err := token(c.Secret); err != nil { // and the client is cached
			t.Fatal(err)
		}
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges/" + c.BadgeID + "/roll",
			Body: map[string]any{"graceHours": 1}, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"s3": nil})
		au := got["auth"].(map[string]any)
		fresh := au["clientSecret"].(string)
		if au["clientId"] != c.ID || fresh == c.Secret || au["tokenUrl"] != c.TokenURL {
			t.Fatalf("rolled auth credentials %v", au)
		}
		if token(fresh) != nil || token(c.Secret) != nil {
			t.Fatal("both client secrets must work during the grace")
		}
		a.Clock.Advance(time.Hour)
		if token(c.Secret) == nil {
			t.Fatal("the old client secret works after its grace")
		}
		if err := token(fresh); err != nil {
			t.Fatalf("the new client secret: %v", err)
		}
	})
}
