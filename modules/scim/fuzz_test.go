package scim

import (
	"encoding/json"
	"testing"
)

// FuzzFilter: any filter text a client sends is parsed and evaluated over a User without a
// panic, and either parses or is answered 400 invalidFilter.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		`userName eq "ada@acme.example"`, `emails[type eq "work" and value co "@"]`, `not (active eq true) or title pr`,
		`meta.lastModified gt "2026-01-01T00:00:00Z"`, `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "x"`,
		`name.givenName sw "A" and (title ew "o" or displayName le "m")`, `userName eq "a\"b"`, `x gt 1.5e3`, `((a pr))`, `a[b[c pr]]`,
	} {
		f.Add(s)
	}
	doc := map[string]any{}
	_ = json.Unmarshal([]byte(`{"id":"scr_1","userName":"ada@acme.example","active":true,"title":"CEO","name":{"givenName":"Ada"},
		"emails":[{"value":"ada@acme.example","type":"work","primary":true},{"value":7}],
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"x"}},
		"meta":{"created":"2026-11-29T04:00:00Z"}}`), &doc)
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseFilter(s)
		if err != nil {
			return
		}
		_, _ = matches(e, doc, topScope(userType))
	})
}

// FuzzPatch: any PATCH body is applied to a User, or refused, without a panic; what is
// applied is a valid User again.
func FuzzPatch(f *testing.F) {
	for _, s := range []string{
		`{"Operations":[{"op":"replace","value":{"active":false}}]}`,
		`{"Operations":[{"op":"Replace","path":"emails[type eq \"work\"].value","value":"x@acme.example"}]}`,
		`{"Operations":[{"op":"remove","path":"members[value eq \"x\"]"}]}`,
		`{"Operations":[{"op":"add","path":"phoneNumbers[type eq \"work\"].value","value":"1"}]}`,
		`{"Operations":[{"op":"add","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"x"}}}]}`,
		`{"Operations":[{"op":"Remove","path":"emails","value":[{"value":"ada@acme.example"}]}]}`,
	} {
		f.Add(s)
	}
	base := map[string]any{}
	_ = json.Unmarshal([]byte(`{"userName":"ada@acme.example","active":true,"name":{"givenName":"Ada"},
		"emails":[{"value":"ada@acme.example","type":"work","primary":true}]}`), &base)
	f.Fuzz(func(t *testing.T, s string) {
		body, err := decodeObject([]byte(s))
		if err != nil {
			return
		}
		out, err := applyPatch(base, body, userType, "scr_1")
		if err != nil {
			return
		}
		if _, err := normalize(out, userType); err != nil {
			t.Fatalf("a patched User is not one: %v", err)
		}
		if base["userName"] != "ada@acme.example" {
			t.Fatal("the patch changed the original")
		}
	})
}
