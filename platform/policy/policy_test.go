package policy

import "testing"

func TestPolicyAllows(t *testing.T) {
	none := Policy{}
	if !none.Allows("anything:at_all") {
		t.Fatal("no list allows every scope")
	}
	p := Policy{AllowedScopes: []string{"tickets:*", "db:read"}}
	for s, want := range map[string]bool{
		"tickets:read": true, "tickets:a:b": true, "db:read": true,
		"db:write": false, "tickets": false, "ticketsx:read": false, "tickets:": false,
	} {
		if got := p.Allows(s); got != want {
			t.Errorf("Allows(%q) = %v, want %v", s, got, want)
		}
	}
	if (Policy{AllowedScopes: []string{}}).Allows("db:read") {
		t.Fatal("an empty list allows nothing")
	}
}
