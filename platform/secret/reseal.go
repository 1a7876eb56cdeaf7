package secret

import (
	"context"
	"fmt"
	"sort"

	"go.uber.org/fx"
)

// Resealer re-seals, under the current master key, the sealed values one owner keeps
// (a module its signing keys, a product plugin the secrets it must read back, …). `authcore keys
// reseal` runs every one contributed through AsResealer.
type Resealer interface {
	// Name names the values in the command's report ("signing keys").
	Name() string
	// Reseal re-seals at most batch values not sealed under the current key, each with a
	// compare-and-swap so a concurrent change is never overwritten. more reports that the
	// batch was full: there may be others.
	Reseal(ctx context.Context, batch int) (resealed int, more bool, err error)
}

// AsResealer contributes a Resealer; the only place that spells the group tag.
func AsResealer(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.As(new(Resealer)), fx.ResultTags(`group:"resealers"`)))
}

// Resealers is every contributed Resealer.
type Resealers struct {
	fx.In
	All []Resealer `group:"resealers"`
}

// ResealAll re-seals every owner's values batch by batch, in name order, and reports each
// owner's count. Run it while every replica already lists the new key first and the old
// one after it; then the old key can be removed.
func (rs Resealers) ResealAll(ctx context.Context, batch int, report func(name string, resealed int)) error {
	all := append([]Resealer(nil), rs.All...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name() < all[j].Name() })
	for _, r := range all {
		total := 0
		for {
			n, more, err := r.Reseal(ctx, batch)
			if err != nil {
				return fmt.Errorf("resealing %s: %w", r.Name(), err)
			}
			total += n
			if !more {
				break
			}
		}
		report(r.Name(), total)
	}
	return nil
}

// CurrentPrefix is how every value sealed under the current key begins, for stores to
// select what still needs resealing.
func (k *Keyring) CurrentPrefix() string { return "v2." + k.sealing.id + "." }

// ResealEach re-seals n values: at(i) gives the i-th sealed value and its owner (the aad),
// swap(i, v) stores the re-sealed value if the stored one is still the one read, and says
// whether it did. It returns how many were swapped.
func (k *Keyring) ResealEach(n int, at func(i int) (sealed string, aad []byte), swap func(i int, resealed string) (bool, error)) (int, error) {
	done := 0
	for i := range n {
		sealed, aad := at(i)
		v, err := k.Reseal(sealed, aad)
		if err != nil {
			return done, err
		}
		ok, err := swap(i, v)
		if err != nil {
			return done, err
		}
		if ok {
			done++
		}
	}
	return done, nil
}
