package apptest

import "github.com/authcore/authcore/platform/product"

// NotMintable is a product that is registered and listed but cannot be minted, what pay
// is in the stock binary: the fixture of every test about products that are not available,
// so that whether a real product can be minted is its own setting, tested in its own
// package. Add it with WithFx(apptest.NotMintable).
var NotMintable = product.AsProduct(func() product.Product {
	return product.Plain{Name: NotMintableKey, About: "A product tests cannot mint.", Unavailable: NotMintableReason}
})

// The NotMintable product's key and its product_not_available message.
const (
	NotMintableKey    = "later"
	NotMintableReason = "later badges are not available in tests"
)
