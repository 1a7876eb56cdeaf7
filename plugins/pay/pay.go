// Package pay is the "pay" badge product: registered and listed with its description, but
// not mintable yet (seed 4.4 rule 2).
package pay

import (
	"context"
	"errors"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/product"
)

// Module contributes the product.
var Module = fx.Module("plugin-pay", product.AsProduct(New))

// Product is the pay product.
type Product struct{}

var _ product.Product = Product{}

// New returns the product.
func New() Product { return Product{} }

// NotAvailable is the product_not_available message (SPEC §6).
const NotAvailable = "payments badges are not available yet"

func (Product) Key() string              { return "pay" }
func (Product) Description() string      { return "Payments product, coming later." }
func (Product) Mintable() (bool, string) { return false, NotAvailable }

// Mint is never reached: the badge module checks Mintable first.
func (Product) Mint(context.Context, *ent.Tx, product.Badge) (any, error) {
	return nil, errors.New(NotAvailable)
}

func (Product) Revoke(context.Context, *ent.Tx, product.Badge) error { return nil }
