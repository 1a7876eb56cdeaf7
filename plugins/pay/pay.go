// Package pay is the "pay" badge product: registered and listed with its description, but
// not mintable yet (seed 4.4 rule 2).
package pay

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/product"
)

// Plugin is the product as cmd/authcore/app lists it.
var Plugin = product.Plugin{Module: Module}

// Module contributes the product.
var Module = fx.Module("plugin-pay", product.AsProduct(New))

// NotAvailable is the product_not_available message (SPEC §6).
const NotAvailable = "payments badges are not available yet"

// New returns the product.
func New() product.Plain {
	return product.Plain{Name: "pay", About: "Payments product, coming later.", Unavailable: NotAvailable}
}
