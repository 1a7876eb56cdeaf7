package credential

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func kind(name, prefix, pattern string, revoked *[]string) Kind {
	return Kind{Name: name, Pattern: pattern,
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
	for name, kinds := range map[string][]Kind{
		"twice":       {kind("a", "x", "", &r), kind("a", "y", "", &r)},
		"no name":     {kind("", "x", "", &r)},
		"no match":    {{Name: "a", Revoke: kind("a", "", "", &r).Revoke}},
		"bad pattern": {kind("a", "x", "(", &r)},
		"scannable but not revocable": {{Name: "a", Pattern: "x_[a-z]+", Match: func(string) bool { return true },
			Introspect: func(context.Context, string, string) (map[string]any, error) { return nil, nil }}},
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
	r, err := New(Params{Kinds: []Kind{owned, onlyRevocable, {Name: "jwt", Match: func(string) bool { return true },
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
	if _, err := r.Revoke(ctx, "eyJ.x.y", Revocation{}); !errors.Is(err, ErrNotLive) {
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
	a.IntrospectedAs = "session"
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
	for token, want := range map[string]string{"a_1": "session", "b_1": "service_badge", "d_1": "deploy_key"} {
		if f, _ := r.Introspect(context.Background(), token, "prj"); f["kind"] != want || f["sub"] != "u" {
			t.Fatalf("%s: %v", token, f)
		}
	}
}
