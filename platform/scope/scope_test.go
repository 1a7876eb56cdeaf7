package scope

import (
	"strings"
	"testing"
)

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		held, s string
		want    bool
	}{
		{"files:read", "files:read", true}, {"files:*", "files:read", true}, {"files:*", "files:", false},
		{"files:*", "filesx:read", false}, {"files*", "filesx", false}, {"*", "files:read", false},
		{"files:read", "files:write", false}, {"a:b:*", "a:b:c", true},
	} {
		if got := Covers(c.held, c.s); got != c.want {
			t.Errorf("Covers(%q, %q) = %v", c.held, c.s, got)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"", nil, true}, {"files:read db:read", []string{"files:read", "db:read"}, true},
		{"files:read,admin:all", nil, false}, {"Files", nil, false}, {"a b\tc", []string{"a", "b", "c"}, true},
		{strings.Repeat("a", 65), nil, false}, {"x\"y", nil, false},
	} {
		got, ok := Parse(c.in)
		if ok != c.ok || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Parse(%q) = %q, %v", c.in, got, ok)
		}
	}
}

// FuzzParse: what Parse accepts is only scopes of the grammar, none holding a separator.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "files:read", "files:read,admin:all", "a b", "x:* y:z", "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := Parse(in)
		if !ok {
			return
		}
		for _, s := range got {
			if !Valid(s) || strings.ContainsAny(s, " ,\t\n\"") {
				t.Fatalf("Parse(%q) accepted %q", in, s)
			}
		}
	})
}
