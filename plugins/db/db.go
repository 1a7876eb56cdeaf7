// Package db is the "db" badge product: the project's database. Its badges are a bearer
// secret only (the badge's own plaintext); nothing else is minted.
package db

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/product"
)

// Plugin is the product as cmd/authcore/app lists it.
var Plugin = product.Plugin{Module: Module}

// Module contributes the product.
var Module = fx.Module("plugin-db", product.AsProduct(New))

// New returns the product; it has nothing to configure.
func New() product.Plain {
	return product.Plain{Name: "db", About: "Database of the project (tables, query, studio)."}
}
