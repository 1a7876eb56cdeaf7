package credential

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/secret"
)

// kind is a kind whose secrets are prefix + anything, revoked unless they end in "dead".
func kind(name, prefix, pattern string, revoked *[]string) Kind {
	return Kind{Name: name, Prefix: prefix, Pattern: pattern,
		Match: func(t string) bool { return strings.HasPrefix(t, prefix) },
		Revoke: func(_ context.Context, t string, _ Revocation) error {
			if strings.HasSuffix(t, "dead") {
				return ErrNotLive
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
	if k, err := r.Revoke(ctx, "bb_live", Revocation{}); k != "b" || err != nil {
		t.Fatalf("%q %v", k, err)
	}
	if _, err := r.Revoke(ctx, "aa_dead", Revocation{}); !errors.Is(err, ErrNotLive) {
		t.Fatalf("a dead one: %v", err)
	}
	if _, err := r.Revoke(ctx, "zz_whatever", Revocation{}); !errors.Is(err, ErrNotLive) {
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
	jwt := func(name, typ string) Kind {
		return Kind{Name: name, JWTType: typ, Introspect: func(context.Context, string, string) (map[string]any, error) { return nil, nil }}
	}
	for name, kinds := range map[string][]Kind{
		"twice":                       {kind("a", "x", "", &r), kind("a", "y", "", &r)},
		"no name":                     {kind("", "x", "", &r)},
		"neither prefix nor typ":      {{Name: "a", Revoke: kind("a", "", "", &r).Revoke}},
		"both prefix and typ":         {{Name: "a", Prefix: "ac_a_", JWTType: "JWT", Revoke: kind("a", "", "", &r).Revoke}},
		"a literal prefix, no match":  {{Name: "a", Prefix: "AKAC", Revoke: kind("a", "", "", &r).Revoke}},
		"an ac_ prefix not ac_<x>_":   {{Name: "a", Prefix: "ac_a_b_", Revoke: kind("a", "", "", &r).Revoke}},
		"an upper-case ac_ prefix":    {{Name: "a", Prefix: "ac_A_", Revoke: kind("a", "", "", &r).Revoke}},
		"bad pattern":                 {kind("a", "x", "(", &r)},
		"scannable without a prefix":  {{Name: "a", JWTType: "JWT", Pattern: "x_[a-z]+", Revoke: kind("a", "", "", &r).Revoke}},
		"one JWT typ claimed twice":   {jwt("a", "JWT"), jwt("b", "JWT")},
		"scannable but not revocable": {{Name: "a", Prefix: "ac_x_", Pattern: "x_[a-z]+", Introspect: jwt("a", "JWT").Introspect}},
	} {
		if _, err := New(Params{Kinds: kinds}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestIntrospectGoesToTheOwner(t *testing.T) {
	var revoked []string
	owned := kind("a", "aa_", "aa_[a-z]+", &revoked)
	owned.Introspect = func(_ context.Context, tok, project string) (map[string]any, error) {
		if project != "prj_1" {
			return nil, nil
		}
		return map[string]any{"kind": "a", "sub": tok}, nil
	}
	onlyRevocable := kind("b", "bb_", "", &revoked)
	r, err := New(Params{Kinds: []Kind{owned, onlyRevocable, {Name: "jwt", JWTType: "JWT",
		Introspect: func(context.Context, string, string) (map[string]any, error) {
			return map[string]any{"kind": "jwt"}, nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if f, err := r.Introspect(ctx, "aa_x", "prj_1"); err != nil || f["sub"] != "aa_x" {
		t.Fatalf("%v %v", f, err)
	}
	if f, _ := r.Introspect(ctx, "aa_x", "prj_2"); f != nil {
		t.Fatalf("another project's: %v", f)
	}
	if f, _ := r.Introspect(ctx, "bb_x", "prj_1"); f != nil {
		t.Fatalf("a kind without Introspect answered %v", f)
	}
	if f, _ := r.Introspect(ctx, "eyJ0eXAiOiJKV1QifQ.e30.sig", "prj_1"); f["kind"] != "jwt" {
		t.Fatalf("a JWT of its typ: %v", f)
	}
	if f, _ := r.Introspect(ctx, "eyJ0eXAiOiJhdCtqd3QifQ.e30.sig", "prj_1"); f != nil {
		t.Fatalf("a JWT of a typ nobody claimed: %v", f)
	}
	if _, err := r.Revoke(ctx, "eyJ0eXAiOiJKV1QifQ.e30.sig", Revocation{}); !errors.Is(err, ErrNotLive) {
		t.Fatalf("a kind without Revoke: %v", err)
	}
}

func TestJWTType(t *testing.T) {
	for tok, want := range map[string]string{
		"eyJ0eXAiOiJhdCtqd3QiLCJhbGciOiJFZERTQSJ9.e30.sig": "at+jwt", // {"typ":"at+jwt","alg":"EdDSA"}
		"eyJ0eXAiOiJKV1QifQ.e30.sig":                       "JWT",
		"eyJhbGciOiJub25lIn0.e30.sig":                      "", // no typ
	} {
		if got, ok := JWTType(tok); !ok || got != want {
			t.Errorf("JWTType(%q) = %q, %v; want %q", tok, got, ok, want)
		}
	}
	for _, tok := range []string{"ac_ai_x", "a.b", "a.b.c.d", "!!!.e30.sig", "bm90IGpzb24.e30.sig", ""} {
		if _, ok := JWTType(tok); ok {
			t.Errorf("JWTType(%q) is ok", tok)
		}
	}
}

// The registry names an introspection answer's kind and lists kinds and events once each.
func TestIntrospectedKindsAndEvents(t *testing.T) {
	var revoked []string
	a := kind("session_access_token", "a_", "", &revoked)
	a.IntrospectedAs, a.Prefix, a.JWTType, a.Match = "session", "", "JWT", nil
	a.Introspect = func(context.Context, string, string) (map[string]any, error) { return map[string]any{"sub": "u"}, nil }
	b := kind("service_badge:db", "b_", "", &revoked)
	b.IntrospectedAs, b.Introspect = "service_badge", a.Introspect
	b.Events = []string{"service_badge.revoke", "service_badge.create"}
	c := kind("service_badge:s3", "c_", "", &revoked)
	c.IntrospectedAs, c.Introspect, c.Events = "service_badge", a.Introspect, b.Events
	d := kind("deploy_key", "d_", "", &revoked)
	d.Introspect = a.Introspect
	r, err := New(Params{Kinds: []Kind{a, b, c, d}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.IntrospectedKinds(); strings.Join(got, ",") != "deploy_key,service_badge,session" {
		t.Fatalf("IntrospectedKinds %v", got)
	}
	if got := r.Events(); strings.Join(got, ",") != "service_badge.create,service_badge.revoke" {
		t.Fatalf("Events %v", got)
	}
	for token, want := range map[string]string{"eyJ0eXAiOiJKV1QifQ.e30.sig": "session", "b_1": "service_badge", "d_1": "deploy_key"} {
		if f, _ := r.Introspect(context.Background(), token, "prj"); f["kind"] != want || f["sub"] != "u" {
			t.Fatalf("%s: %v", token, f)
		}
	}
}

// SPEC §9b: the registry owns the secrets' namespace. Two claims on one prefix, or a prefix
// that begins another, stop the start with one line naming both kinds; a secret goes to
// the kind whose prefix it has, whatever the order of registration.
func TestOnePrefixOneKind(t *testing.T) {
	var r []string
	refresh := Kind{Name: "session_refresh_token", Prefix: secret.Prefix("rt"), Pattern: secret.Pattern("rt"), Revoke: kind("x", "", "", &r).Revoke}
	badgeRT := Kind{Name: "service_badge:rt", Prefix: secret.Prefix("rt"), Pattern: secret.Pattern("rt"), Revoke: kind("y", "", "", &r).Revoke}
	s3 := kind("s3_access_key", "AKAC", "AKAC[0-9A-Z]{16}", &r)
	for _, tc := range []struct {
		name  string
		kinds []Kind
		want  []string
	}{
		{"one prefix claimed twice", []Kind{refresh, badgeRT}, []string{"ac_rt_", "service_badge:rt", "session_refresh_token"}},
		{"the other way round", []Kind{badgeRT, refresh}, []string{"ac_rt_", "service_badge:rt", "session_refresh_token"}},
		{"a prefix that begins another", []Kind{s3, kind("short", "AK", "", &r)}, []string{"AK ", "AKAC", "s3_access_key", "short"}},
		{"a prefix that begins every ac_ secret", []Kind{refresh, kind("greedy", "ac", "", &r)}, []string{"ac ", "ac_rt_", "greedy", "session_refresh_token"}},
		{"a claim on a kind's prefix", []Kind{refresh, {Name: "reset", Prefix: "ac_rt_"}}, []string{"ac_rt_", "reset", "session_refresh_token"}},
	} {
		_, err := New(Params{Kinds: tc.kinds})
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		msg := err.Error() + " "
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not name %q", tc.name, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: %q is more than one line", tc.name, msg)
		}
	}

	// Prefixes that only look alike are no clash, and each secret finds its own kind.
	var revoked []string
	kinds := []Kind{
		{Name: "z_first_by_name", Prefix: secret.Prefix("rtx"), Revoke: kind("z_first_by_name", "", "", &revoked).Revoke},
		{Name: "a_refresh", Prefix: secret.Prefix("rt"), Revoke: kind("a_refresh", "", "", &revoked).Revoke},
		{Name: "m_reset", Prefix: secret.Prefix("r")},
		s3,
	}
	reg, err := New(Params{Kinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for prefix, want := range map[string]string{"rt": "a_refresh", "rtx": "z_first_by_name"} {
		tok, _ := secret.NewToken(prefix)
		if got, err := reg.Revoke(ctx, tok, Revocation{}); got != want || err != nil {
			t.Errorf("ac_%s_: revoked as %q (%v), want %s", prefix, got, err, want)
		}
		tampered := tok[:len(tok)-1] + "0"
		if tampered == tok { // one token in 62 ends in 0
			tampered = tok[:len(tok)-1] + "1"
		}
		if _, err := reg.Revoke(ctx, tampered, Revocation{}); !errors.Is(err, ErrNotLive) {
			t.Errorf("ac_%s_ with a bad checksum: %v", prefix, err)
		}
	}
	reset, _ := secret.NewToken("r")
	unclaimed, _ := secret.NewToken("zz")
	for _, tok := range []string{reset, unclaimed, "ac_", "ac__x", "AKA", ""} {
		if got, err := reg.Revoke(ctx, tok, Revocation{}); !errors.Is(err, ErrNotLive) {
			t.Errorf("%q: revoked as %q (%v)", tok, got, err)
		}
	}
	if k, ok := reg.Of("AKAC0123456789ABCDEF"); !ok || k.Name != "s3_access_key" {
		t.Errorf("AKAC…: %v %v", k.Name, ok)
	}
}
