package oauth

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"testing"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/resource"
)

func TestNarrow(t *testing.T) {
	for _, c := range []struct {
		name      string
		held, req []string
		bounds    [][]string
		want      []string
		ok        bool
	}{
		{"nothing asked: everything held", []string{"files:*", "db:read"}, nil, nil, []string{"files:*", "db:read"}, true},
		{"asked within a wildcard", []string{"files:*"}, []string{"files:read"}, nil, []string{"files:read"}, true},
		{"asked beyond what is held", []string{"files:read"}, []string{"files:write"}, nil, nil, false},
		{"a bound narrows the default", []string{"files:*"}, nil, [][]string{{"files:read"}}, []string{"files:read"}, true},
		{"a bound refuses what is held", []string{"files:*"}, []string{"files:write"}, [][]string{{"files:read"}}, nil, false},
		{"every bound must cover", []string{"a:*"}, []string{"a:x"}, [][]string{{"a:*"}, {"a:y"}}, nil, false},
		{"nothing in common is an empty grant", []string{"a:x"}, nil, [][]string{{"b:y"}}, []string{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Narrow(c.held, c.req, c.bounds)
			if ok != c.ok || (ok && !reflect.DeepEqual(got, c.want)) {
				t.Fatalf("Narrow = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestTargets(t *testing.T) {
	form := url.Values{"resource": {"https://A.example/x"}, "audience": {"https://b.example/"}}
	got, err := Targets(form, true)
	if err != nil || !reflect.DeepEqual(got, []string{"https://a.example/x", "https://b.example/"}) {
		t.Fatalf("Targets = %v, %v", got, err)
	}
	if got, _ := Targets(form, false); len(got) != 1 {
		t.Fatalf("audience read where it is not a parameter: %v", got)
	}
	if _, err := Targets(url.Values{"resource": {"https://a.example/#frag"}}, false); err != ErrTarget {
		t.Fatalf("a fragment: %v", err)
	}
}

type registry map[string]resource.Resource

func (r registry) Lookup(_ context.Context, uri string) (resource.Resource, bool, error) {
	res, ok := r[uri]
	return res, ok, nil
}

func TestRegistered(t *testing.T) {
	reg := registry{
		"https://a.example/": {URI: "https://a.example/", ProjectID: "prj_1", Scopes: []string{"a:*"}},
		"https://b.example/": {URI: "https://b.example/", ProjectID: "prj_2"},
	}
	aud, bounds, err := Registered(context.Background(), reg, "prj_1", []string{"https://a.example/", "https://a.example/"})
	if err != nil || !reflect.DeepEqual(aud, []string{"https://a.example/"}) || !reflect.DeepEqual(bounds, [][]string{{"a:*"}, {"a:*"}}) {
		t.Fatalf("Registered = %v, %v, %v", aud, bounds, err)
	}
	for _, target := range []string{"https://b.example/", "https://c.example/"} {
		if _, _, err := Registered(context.Background(), reg, "prj_1", []string{target}); err != ErrUnregistered {
			t.Fatalf("%s: %v", target, err)
		}
	}
	if Audience([]string{"x"}) != "x" || !reflect.DeepEqual(Audience([]string{"x", "y"}), []string{"x", "y"}) {
		t.Fatal("Audience")
	}
}

type signer struct{ err error }

func (s signer) SignAccessToken(context.Context, Claims) (string, error) { return "t", s.err }
func (s signer) JWKS() ([]byte, error)                                   { return nil, s.err }
func (s signer) SignIDToken(context.Context, map[string]any, string) (string, error) {
	return "t", s.err
}
func (s signer) SignTyped(context.Context, map[string]any, string, string) (string, error) {
	return "t", s.err
}

func TestSignBeforeTheKeysLoad(t *testing.T) {
	if _, err := Sign(context.Background(), signer{identity.ErrEngineNotReady}, Claims{}); err != errSigningUnavailable {
		t.Fatalf("%v", err)
	}
	boom := errors.New("boom")
	if _, err := Sign(context.Background(), signer{boom}, Claims{}); err != boom {
		t.Fatalf("%v", err)
	}
}

// An exchange of an access token takes one as its subject and acts for no delegate
// (RFC 8693 §2.1): each missing or wrong part is its own invalid_request.
func TestSubjectAccessToken(t *testing.T) {
	ok := url.Values{"subject_token": {"tok"}, "subject_token_type": {TokenTypeAccess}}
	if got, err := SubjectAccessToken(ok); err != nil || got != "tok" {
		t.Fatalf("SubjectAccessToken = %q, %v", got, err)
	}
	for name, form := range map[string]url.Values{
		"no subject_token":       {"subject_token_type": {TokenTypeAccess}},
		"an id_token subject":    {"subject_token": {"tok"}, "subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}},
		"no subject_token_type":  {"subject_token": {"tok"}},
		"an actor_token as well": {"subject_token": {"tok"}, "subject_token_type": {TokenTypeAccess}, "actor_token": {"act"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := SubjectAccessToken(form)
			var e *apperr.Error
			if !errors.As(err, &e) || e.Code != "invalid_request" {
				t.Fatalf("SubjectAccessToken = %v, want invalid_request", err)
			}
		})
	}
}
