// Package db is the "db" badge product: the project's database. Its badges are a bearer
// secret only (the badge's own plaintext); `s3` and `auth` are null.
package db

import (
	"context"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/product"
)

// Module contributes the product.
var Module = fx.Module("plugin-db", product.AsProduct(New))

// Product is the db product.
type Product struct{}

var _ product.Product = Product{}

// New returns the product; it has nothing to configure.
func New() Product { return Product{} }

func (Product) Key() string         { return "db" }
func (Product) Description() string { return "Database of the project (tables, query, studio)." }
func (Product) Mintable() (bool, string) {
	return true, ""
}

// Mint has nothing to add to the badge's bearer secret.
func (Product) Mint(context.Context, *ent.Tx, product.Badge) (any, error) { return nil, nil }

// Revoke has nothing to withdraw beyond the badge itself.
func (Product) Revoke(context.Context, *ent.Tx, product.Badge) error { return nil }
