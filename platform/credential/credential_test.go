package credential

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/identity"
)

func kind(name, prefix, pattern string, revoked *[]string) Kind {
	return Kind{Name: name, Pattern: pattern,
		Match: func(t string) bool { return strings.HasPrefix(t, prefix) },
		Revoke: func(_ context.Context, t string, _ identity.Revocation) error {
			if strings.HasSuffix(t, "dead") {
				return identity.ErrNotLive
			}
			*revoked = append(*revoked, name+":"+t)
			return nil
		}}
}

func TestRegistry(t *testing.T) {
	var revoked []string
	r, err := New(Params{Kinds: []Kind{kind("b", "bb_", "bb_[a-z]+", &revoked), kind("a", "aa_", "aa_[a-z]+", &revoked), kind("jwt", "ey", "", &revoked)}})
	if err != nil {
		t.Fatal(err)
	}
	if names := []string{r.Kinds()[0].Name, r.Kinds()[1].Name, r.Kinds()[2].Name}; strings.Join(names, ",") != "a,b,jwt" {
		t.Fatalf("order %v", names)
	}
	ctx := context.Background()
	if k, err := r.Revoke(ctx, "bb_live", identity.Revocation{}); k != "b" || err != nil {
		t.Fatalf("%q %v", k, err)
	}
	if _, err := r.Revoke(ctx, "aa_dead", identity.Revocation{}); !errors.Is(err, identity.ErrNotLive) {
		t.Fatalf("a dead one: %v", err)
	}
	if _, err := r.Revoke(ctx, "zz_whatever", identity.Revocation{}); !errors.Is(err, identity.ErrNotLive) {
		t.Fatalf("no kind: %v", err)
	}
	if len(revoked) != 1 || revoked[0] != "b:bb_live" {
		t.Fatalf("%v", revoked)
	}
	p := r.Pattern()
	if !p.MatchString("leaked: aa_xyz in a file") || !p.MatchString("bb_q") || p.MatchString("eyJhbGc") {
		t.Fatalf("pattern %s", p)
	}
}

func TestRegistryRefusesBadKinds(t *testing.T) {
	var r []string
	for name, kinds := range map[string][]Kind{
		"twice":       {kind("a", "x", "", &r), kind("a", "y", "", &r)},
		"no name":     {kind("", "x", "", &r)},
		"no match":    {{Name: "a", Revoke: kind("a", "", "", &r).Revoke}},
		"bad pattern": {kind("a", "x", "(", &r)},
	} {
		if _, err := New(Params{Kinds: kinds}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
