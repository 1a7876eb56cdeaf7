package scim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/interop"
)

// The evaluator is checked against an independent implementation: npm's
// scim2-parse-filter evaluates a few hundred generated filters over the same users, and
// each filter must match the same users here. The filters keep to where RFC 7644 leaves
// no choice and the two agree by design: every value is lower-case (scim2-parse-filter
// compares with case; authcore, as RFC 7643 says, without it for userName and the like),
// ne only on attributes every user has with one value (for an absent or multi-valued one
// the RFC leaves ne open), pr only on attributes absent or non-empty, value filters of one
// condition.
func TestFiltersAgreeWithAnotherImplementation(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 7))
	users := filterUsers(rng, 40)
	filters := make([]string, 400)
	for i := range filters {
		filters[i] = genFilter(rng, users, 0)
	}
	raw, err := json.Marshal(map[string]any{"users": users, "filters": filters})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "filters.json")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var theirs []json.RawMessage
	if err := json.Unmarshal([]byte(interop.Run(t, time.Minute, "scim-filter.mjs", "SCIM_FILTERS="+file)), &theirs); err != nil {
		t.Fatal(err)
	}
	if len(theirs) != len(filters) {
		t.Fatalf("%d answers for %d filters", len(theirs), len(filters))
	}
	sc := topScope(userType)
	some := 0
	for i, f := range filters {
		var want []int
		if err := json.Unmarshal(theirs[i], &want); err != nil {
			t.Fatalf("%s: scim2-parse-filter: %s", f, theirs[i])
		}
		expr, err := parseFilter(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var got []int
		for j, u := range users {
			var doc map[string]any
			b, _ := json.Marshal(u) // the documents as JSON gives them: numbers float64, lists []any
			_ = json.Unmarshal(b, &doc)
			ok, err := matches(expr, doc, sc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if ok {
				got = append(got, j)
			}
		}
		if want == nil {
			want = []int{}
		}
		if got == nil {
			got = []int{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s\n  authcore matches %v\n  scim2-parse-filter matches %v", f, got, want)
		}
		if len(got) > 0 && len(got) < len(users) {
			some++
		}
	}
	// The generated set must discriminate, or agreeing proves little.
	if some < len(filters)/4 {
		t.Fatalf("only %d of %d filters match some users and not others", some, len(filters))
	}
}

var (
	givenNames = []string{"ada", "grace", "alan", "barbara", "edsger", "frances", "ken", "radia"}
	families   = []string{"lovelace", "hopper", "turing", "liskov", "dijkstra", "allen", "thompson", "perlman"}
	titles     = []string{"ceo", "engineer", "designer", "cto"}
	depts      = []string{"finance", "research", "sales"}
	domains    = []string{"acme.example", "globex.example", "initech.example"}
)

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }

// filterUsers are n users with the attributes the filters name; some have no title, no
// department, a second email.
func filterUsers(rng *rand.Rand, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		g, f := pick(rng, givenNames), pick(rng, families)
		userName := fmt.Sprintf("%s.%s%d@%s", g, f, i, pick(rng, domains))
		emails := []any{map[string]any{"value": userName, "type": "work", "primary": true}}
		if rng.IntN(2) == 0 {
			emails = append(emails, map[string]any{"value": g + "@home.example", "type": "home", "primary": false})
		}
		u := map[string]any{
			"id": fmt.Sprintf("scr_%03d", i), "userName": userName, "displayName": g + " " + f, "active": rng.IntN(3) > 0,
			"name": map[string]any{"givenName": g, "familyName": f}, "emails": emails,
		}
		if rng.IntN(3) > 0 {
			u["title"] = pick(rng, titles)
		}
		if rng.IntN(2) == 0 {
			u[enterpriseSchema] = map[string]any{"department": pick(rng, depts)}
		}
		out[i] = u
	}
	return out
}

// mangle spells an attribute name in random case: names are not case-exact.
func mangle(rng *rand.Rand, name string) string {
	if rng.IntN(3) > 0 {
		return name
	}
	b := []byte(name)
	for i := range b {
		if rng.IntN(2) == 0 && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

// sample is a value to compare with: a whole value of the attribute, or a piece of one.
func sample(rng *rand.Rand, vals []string) string {
	v := pick(rng, vals)
	if len(v) > 2 && rng.IntN(2) == 0 {
		i := rng.IntN(len(v) - 1)
		j := i + 1 + rng.IntN(len(v)-i-1)
		v = v[i:j]
	}
	if rng.IntN(8) == 0 {
		v = "zz" + v
	}
	return v
}

func valuesOf(users []map[string]any, get func(map[string]any) []string) []string {
	var out []string
	for _, u := range users {
		out = append(out, get(u)...)
	}
	if len(out) == 0 {
		out = []string{"none"}
	}
	return out
}

func genFilter(rng *rand.Rand, users []map[string]any, depth int) string {
	if depth < 3 && rng.IntN(3) == 0 {
		switch rng.IntN(3) {
		case 0:
			return genFilter(rng, users, depth+1) + " and " + genFilter(rng, users, depth+1)
		case 1:
			return "(" + genFilter(rng, users, depth+1) + " or " + genFilter(rng, users, depth+1) + ")"
		default:
			return "not (" + genFilter(rng, users, depth+1) + ")"
		}
	}
	str := func(m map[string]any, k string) []string {
		if s, ok := m[k].(string); ok {
			return []string{s}
		}
		return nil
	}
	single := []struct {
		path    string
		always  bool
		valueOf func(map[string]any) []string
	}{
		{"userName", true, func(u map[string]any) []string { return str(u, "userName") }},
		{"displayName", true, func(u map[string]any) []string { return str(u, "displayName") }},
		{"name.givenName", true, func(u map[string]any) []string { return str(u["name"].(map[string]any), "givenName") }},
		{"name.familyName", true, func(u map[string]any) []string { return str(u["name"].(map[string]any), "familyName") }},
		{"title", false, func(u map[string]any) []string { return str(u, "title") }},
		{enterpriseSchema + ":department", false, func(u map[string]any) []string {
			if m, ok := u[enterpriseSchema].(map[string]any); ok {
				return str(m, "department")
			}
			return nil
		}},
		{"emails.value", false, func(u map[string]any) []string {
			var out []string
			for _, e := range u["emails"].([]any) {
				out = append(out, e.(map[string]any)["value"].(string))
			}
			return out
		}},
	}
	ops := []string{"eq", "co", "sw", "ew", "gt", "ge", "lt", "le"}
	switch rng.IntN(10) {
	case 0:
		return mangle(rng, "active") + " eq " + pick(rng, []string{"true", "false"})
	case 1:
		return mangle(rng, pick(rng, []string{"title", enterpriseSchema + ":department", "displayName"})) + " pr"
	case 2:
		// One condition inside the brackets: scim2-parse-filter tests each condition of a
		// value filter against any value on its own, where RFC 7644 wants one value to meet
		// them all (TestValuePathConditionsHoldForOneValue pins authcore's reading).
		inner := mangle(rng, "type") + ` eq "` + pick(rng, []string{"work", "home"}) + `"`
		if rng.IntN(2) == 0 {
			inner = mangle(rng, "value") + " " + pick(rng, ops) + ` "` + sample(rng, valuesOf(users, single[6].valueOf)) + `"`
		}
		return mangle(rng, "emails") + "[" + inner + "]"
	}
	a := pick(rng, single)
	op := pick(rng, ops)
	if a.always && rng.IntN(6) == 0 {
		op = "ne"
	}
	path := a.path
	if !strings.HasPrefix(path, "urn:") {
		path = mangle(rng, path)
	}
	return path + " " + op + ` "` + sample(rng, valuesOf(users, a.valueOf)) + `"`
}
