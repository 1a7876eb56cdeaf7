package scim

import (
	"testing"
)

func evalOn(t *testing.T, f string, doc map[string]any) bool {
	t.Helper()
	e, err := parseFilter(f)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	ok, err := matches(e, doc, topScope(userType))
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return ok
}

// RFC 7644 §3.4.2.2: a value filter's conditions hold for one and the same value.
func TestValuePathConditionsHoldForOneValue(t *testing.T) {
	doc := map[string]any{"userName": "radia", "emails": []any{
		map[string]any{"value": "radia@acme.example", "type": "work"},
		map[string]any{"value": "radia@home.example", "type": "home"},
	}}
	if evalOn(t, `emails[type eq "home" and value ew "@acme.example"]`, doc) {
		t.Error("matched the home type of one value and the address of another")
	}
	if !evalOn(t, `emails[type eq "work" and value ew "@acme.example"]`, doc) {
		t.Error("did not match the work value")
	}
}

// Each rule of the evaluator that the comparison with scim2-parse-filter leaves out.
func TestFilterRules(t *testing.T) {
	doc := map[string]any{
		"id": "scr_ABC", "userName": "Ada@Acme.example", "title": "", "active": true,
		"emails": []any{map[string]any{"value": "ada@acme.example", "type": "work"}},
		"meta":   map[string]any{"created": "2026-11-29T04:00:00Z", "lastModified": "2026-11-29T05:00:00.5Z"},
	}
	for f, want := range map[string]bool{
		`userName eq "ada@acme.EXAMPLE"`:                true,  // userName is not case-exact
		`id eq "scr_abc"`:                               false, // id is
		`title pr`:                                      false, // an empty string is not present
		`nickName pr`:                                   false,
		`nickName eq null`:                              true,
		`nickName ne "x"`:                               true, // ne is not eq: an absent value is not "x"
		`emails eq "ada@acme.example"`:                  true, // a multi-valued complex attribute compares its values
		`emails.type ne "work"`:                         false,
		`meta.lastModified gt "2026-11-29T05:00:00Z"`:   true, // dateTimes compare as times, not text
		`meta.created lt "2026-11-29T04:00:00.000001Z"`: true,
		`meta.created ge "2026-11-29T04:00:00+00:00"`:   true,
		`shoeSize gt 4`:                                 false,
		`urn:ietf:params:scim:schemas:core:2.0:User:userName sw "ADA"`: true,
		`urn:example:other:userName sw "ada"`:                          false,
		`userName eq "Ada@Acme.example" and not (active eq false)`:     true,
		`userName eq "a\"b" or title eq ""`:                            true,
	} {
		if got := evalOn(t, f, doc); got != want {
			t.Errorf("%s: %v, want %v", f, got, want)
		}
	}
}
