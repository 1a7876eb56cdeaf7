package app_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/product"
)

// SPEC §9b, one secret namespace. The attack: a product keyed rt minted badges ac_rt_…,
// the shape of session refresh tokens, and the registry sent a leaked refresh token to the
// first kind whose prefix matched — the product's — so a signed leak report answered
// false_positive and the token still refreshed. Now the binary does not start with such
// a product, and says why in one line naming both claims.
func TestAPrefixClaimedTwiceStopsTheStart(t *testing.T) {
	rt := product.Plugin{Module: fx.Module("plugin-rt", product.AsProduct(func() product.Product {
		return product.Plain{Name: "rt", About: "A product keyed like session refresh tokens."}
	}))}
	lookalike := credential.AsKinds(func() []credential.Kind {
		return []credential.Kind{{Name: "lookalike_key", Prefix: "AK", Match: func(string) bool { return true },
			Revoke: func(context.Context, string, credential.Revocation) error { return credential.ErrNotLive }}}
	})
	for _, tc := range []struct {
		name string
		opt  apptest.Option
		want []string
	}{
		{"a product keyed like a kind", apptest.WithProducts(append(app.Products(), rt)...),
			[]string{"ac_rt_", "service_badge:rt", "session_refresh_token"}},
		{"a kind whose prefix begins another's", apptest.WithFx(lookalike),
			[]string{"AK ", "AKAC", "lookalike_key", "s3_access_key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := apptest.BuildErr(t, tc.opt)
			if err == nil {
				t.Fatal("the app started")
			}
			// What `authcore serve` prints (cmd/authcore: dig.RootCause, one line).
			line := dig.RootCause(err).Error()
			t.Log(line)
			if strings.Contains(line, "\n") {
				t.Fatalf("more than one line: %q", line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line+" ", w) {
					t.Errorf("%q does not name %q", line, w)
				}
			}
		})
	}
}
