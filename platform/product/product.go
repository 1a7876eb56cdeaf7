// Package product is the contract between the badge module and the product plugins under
// plugins/. A plugin is an fx module that contributes a Product through AsProduct; the
// badge module sees only this contract and the registry built from the group, never a
// plugin package. Adding a product is one folder under plugins/ and one line in
// cmd/authcore/app (docs/extending.md).
package product

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
)

// Badge is what a plugin is told about the badge it mints or revokes credentials for.
type Badge struct {
	ID        string
	ProjectID string
	Product   string
	Name      string
	Role      string
	ExpiresAt *time.Time
	// Options are what the product's MintOptions made of the create body: at Mint only,
	// nil for a product that is not Configurable.
	Options any
}

// Configurable is a product whose badges take fields of their own in the create body (an
// auth badge's agent scopes, SPEC §21). MintOptions checks them before anything is
// written, so a refusal mints nothing; its error is the create's answer (a validation
// error is 400 validation_failed).
type Configurable interface {
	MintOptions(ctx context.Context, projectID string, body []byte) (MintOptions, error)
}

// MintOptions are a Configurable product's own fields of a create.
type MintOptions struct {
	// Value is handed to Mint as Badge.Options.
	Value any
	// Audit is added to the create's audit metadata (service_badge.create).
	Audit map[string]any
}

// ErrNotConfigured is what Mint returns (wrapped, with its own message) when what the
// product needs is not configured: answered 503 storage_not_configured (seed 4.4 rule 4).
var ErrNotConfigured = errors.New("not configured")

// reservedKeys are fields of the create answer that no product key may shadow.
var reservedKeys = map[string]bool{"badge": true, "plaintext": true}

// Product is one badge product.
type Product interface {
	// Key is the product value in requests: lower-case letters and digits, at most 16.
	Key() string
	// Description is the product's entry in the list endpoint's `products`.
	Description() string
	// Mintable reports whether badges can be minted now, and if not, why (the message of
	// product_not_available).
	Mintable() (ok bool, reason string)
	// Mint issues the product's credentials inside the badge's transaction, so a badge
	// never exists without them. It returns the product's own credentials value (any JSON
	// encodable value; its secrets are shown once), which the create answer carries under
	// the product's key, or nil when the badge's secret is all there is. An error wrapping
	// ErrNotConfigured is answered 503 storage_not_configured.
	Mint(ctx context.Context, tx *ent.Tx, b Badge) (any, error)
	// Revoke withdraws the product's credentials inside the revoke's transaction; a
	// product that caches them publishes their invalidation in that transaction too.
	Revoke(ctx context.Context, tx *ent.Tx, b Badge) error
	// Roll issues new credentials for the badge inside the roll's transaction (SPEC §12),
	// returned as Mint returns them. The ones they replace keep working until graceUntil
	// and never after; with graceUntil nil they stop now, and so, always, do any an earlier
	// roll replaced. A product that caches them invalidates them in that transaction.
	Roll(ctx context.Context, tx *ent.Tx, b Badge, graceUntil *time.Time) (any, error)
}

// Documented is a product that describes what its Mint returns (SPEC §15): Credentials is
// a value of that type (a struct with json tags), or nil when Mint returns nothing. The
// served OpenAPI document describes the create answer's member under the product's key
// from it; a product that is not Documented is described as any value.
type Documented interface {
	Credentials() any
}

// Plugin is a product as the binary lists it (cmd/authcore/app.Products).
type Plugin struct {
	// Module is the plugin's fx module.
	Module fx.Option
	// Settings, when set, returns a new pointer to the plugin's settings struct: fields with
	// kong tags (env, name, default, help) as in platform/config, and optionally a Validate
	// method. The binary parses it with its own settings (flags, environment, --help) and
	// supplies the pointer to the plugin's constructors.
	Settings func() any
}

// AsProduct contributes the Product returned by constructor f. It is the only place that
// spells the group tag.
func AsProduct(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.As(new(Product)), fx.ResultTags(`group:"products"`)))
}

// Module builds the registry from every contributed product.
var Module = fx.Module("product", fx.Provide(NewRegistry))

// Registry is every product, in key order.
type Registry struct {
	list  []Product
	byKey map[string]Product
}

var keyPattern = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)

type registryParams struct {
	fx.In
	Products []Product `group:"products"`
}

// NewRegistry sorts the contributed products by key and refuses duplicates and bad keys.
func NewRegistry(p registryParams) (*Registry, error) {
	r := &Registry{byKey: map[string]Product{}}
	for _, pr := range p.Products {
		k := pr.Key()
		if !keyPattern.MatchString(k) || reservedKeys[k] {
			return nil, fmt.Errorf("product key %q: want %s, and not a field of the create answer", k, keyPattern)
		}
		if _, dup := r.byKey[k]; dup {
			return nil, fmt.Errorf("product %q is registered twice", k)
		}
		r.byKey[k] = pr
		r.list = append(r.list, pr)
	}
	sort.Slice(r.list, func(i, j int) bool { return r.list[i].Key() < r.list[j].Key() })
	return r, nil
}

// Get returns the product with key k.
func (r *Registry) Get(k string) (Product, bool) {
	p, ok := r.byKey[k]
	return p, ok
}

// All returns every product in key order.
func (r *Registry) All() []Product { return r.list }

// Keys returns every product key in order.
func (r *Registry) Keys() []string {
	out := make([]string, len(r.list))
	for i, p := range r.list {
		out[i] = p.Key()
	}
	return out
}

// Plain is a product with no credentials of its own beyond the badge's secret, or one not
// mintable yet (with Unavailable as the reason).
type Plain struct {
	Name, About string
	// Unavailable, when set, is why badges cannot be minted (product_not_available).
	Unavailable string
}

var (
	_ Product    = Plain{}
	_ Documented = Plain{}
)

func (p Plain) Key() string              { return p.Name }
func (p Plain) Description() string      { return p.About }
func (p Plain) Mintable() (bool, string) { return p.Unavailable == "", p.Unavailable }

// Credentials: a plain product's badges have nothing beside their secret.
func (Plain) Credentials() any { return nil }

// Roll has nothing to add to the badge's secret, which the badge module rolls itself.
func (p Plain) Roll(context.Context, *ent.Tx, Badge, *time.Time) (any, error) { return nil, nil }

// Mint has nothing to add to the badge's secret; the badge module never calls it on a
// product that is not mintable, and it refuses should anyone else.
func (p Plain) Mint(context.Context, *ent.Tx, Badge) (any, error) {
	if p.Unavailable != "" {
		return nil, errors.New(p.Unavailable)
	}
	return nil, nil
}

// Revoke has nothing to withdraw beyond the badge itself.
func (Plain) Revoke(context.Context, *ent.Tx, Badge) error { return nil }
