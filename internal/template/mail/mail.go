// Package mail is the template of a badge product (docs/extending.md): a mail relay whose
// badges are SMTP credentials. To add a product, copy this folder to plugins/<name>, rename
// the package, the key and the settings, and add one line to cmd/authcore/app/products.go.
// The extension test (cmd/authcore/app/extension_test.go) adds this very package with
// that one line and checks everything a product gets for free.
package mail

import (
	"context"
	"fmt"
	"net"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/product"
)

// Plugin is the product as cmd/authcore/app lists it: the one line to add is
// `mail.Plugin,`.
var Plugin = product.Plugin{Module: Module, Settings: NewSettings}

// Module contributes the product.
var Module = fx.Module("plugin-mail", product.AsProduct(New))

// Settings are the product's own: parsed with the service's (flags, environment, --help)
// and supplied to New.
type Settings struct {
	Relay string `name:"mail-relay" env:"AUTHCORE_MAIL_RELAY" default:"smtp.example.com:587" help:"host:port of the mail relay that mail badges authenticate to (default ${default})."`
}

// NewSettings is what the binary parses the settings into.
func NewSettings() any { return &Settings{} }

// Validate checks what kong cannot.
func (s *Settings) Validate() error {
	if _, _, err := net.SplitHostPort(s.Relay); err != nil {
		return fmt.Errorf("AUTHCORE_MAIL_RELAY: %q is not host:port", s.Relay)
	}
	return nil
}

// Product is the mail product.
type Product struct{ settings *Settings }

var _ product.Product = (*Product)(nil)

// New returns the product.
func New(s *Settings) *Product { return &Product{settings: s} }

func (*Product) Key() string              { return "mail" }
func (*Product) Description() string      { return "SMTP submission through the project's mail relay." }
func (*Product) Mintable() (bool, string) { return true, "" }

// Credentials documents what Mint returns (the served OpenAPI document's BadgeCreated).
func (*Product) Credentials() any { return Credentials{} }

// Credentials is the create answer's `mail` object; the console shows each field once.
// The password is the badge's own secret (ac_mail_…), so leak reports, RFC 7009,
// introspection and service-badges/me know it with nothing here.
type Credentials struct {
	Relay    string `json:"relay"`
	Username string `json:"username"`
}

// Mint hands out where to submit and as whom. A product with credentials of its own would
// create them here, in tx, beside the badge (docs/extending.md, "A product with its own
// table").
func (p *Product) Mint(_ context.Context, _ *ent.Tx, b product.Badge) (any, error) {
	return Credentials{Relay: p.settings.Relay, Username: b.ID}, nil
}

// Roll has nothing of its own to replace: the badge module rolls the badge secret.
func (p *Product) Roll(ctx context.Context, tx *ent.Tx, b product.Badge, _ *time.Time) (any, error) {
	return p.Mint(ctx, tx, b)
}

// Revoke has nothing of its own to withdraw.
func (*Product) Revoke(context.Context, *ent.Tx, product.Badge) error { return nil }
