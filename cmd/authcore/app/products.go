package app

// This file lists the products alone: Go imports are per file, so a product may share its
// name with a platform package (a plugins/mail beside platform/mail) without a clash.

import (
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/plugins/auth"
	"github.com/authcore/authcore/plugins/db"
	"github.com/authcore/authcore/plugins/pay"
	"github.com/authcore/authcore/plugins/s3"
)

// Products are the badge products in the binary: one line each.
func Products() []product.Plugin {
	return []product.Plugin{
		db.Plugin,
		s3.Plugin,
		auth.Plugin,
		pay.Plugin,
	}
}
