package product_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/product"
)

type fake struct{ key string }

func (f fake) Key() string                                             { return f.key }
func (f fake) Description() string                                     { return "the " + f.key }
func (fake) Mintable() (bool, string)                                  { return true, "" }
func (fake) Mint(context.Context, *ent.Tx, product.Badge) (any, error) { return nil, nil }
func (fake) Revoke(context.Context, *ent.Tx, product.Badge) error      { return nil }
func (fake) Roll(context.Context, *ent.Tx, product.Badge, *time.Time) (any, error) {
	return nil, nil
}

// registry builds the registry from products contributed the way plugins contribute them.
func registry(keys ...string) (*product.Registry, error) {
	var r *product.Registry
	opts := []fx.Option{product.Module, fx.Populate(&r), fx.NopLogger}
	for _, k := range keys {
		opts = append(opts, product.AsProduct(func() fake { return fake{k} }))
	}
	err := fx.New(opts...).Err()
	return r, err
}

func TestRegistryIsSortedByKey(t *testing.T) {
	r, err := registry("s3", "auth", "db")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Keys(), ","); got != "auth,db,s3" {
		t.Fatalf("keys %s", got)
	}
	if p, ok := r.Get("db"); !ok || p.Description() != "the db" {
		t.Fatal("Get(db)")
	}
	if _, ok := r.Get("nope"); ok {
		t.Fatal("Get(nope)")
	}
}

func TestRegistryRefuses(t *testing.T) {
	for name, keys := range map[string][]string{
		"a duplicate key":            {"db", "db"},
		"an upper-case key":          {"DB"},
		"an empty key":               {""},
		"a key shadowing badge":      {"badge"},
		"a key shadowing plaintext":  {"plaintext"},
		"a key longer than 16 bytes": {"abcdefghijklmnopq"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := registry(keys...); err == nil {
				t.Fatal("registered")
			}
		})
	}
}
