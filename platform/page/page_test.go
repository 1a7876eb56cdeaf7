package page

import (
	"reflect"
	"testing"
)

// A page holds at most limit rows; the cursor names its last row only when a row
// beyond it was read.
func TestCut(t *testing.T) {
	id := func(s string) string { return s }
	for _, c := range []struct {
		name  string
		rows  []string
		limit int
		want  []string
		next  string // "" for none
	}{
		{"nothing", nil, 2, nil, ""},
		{"fewer than the limit: the last page", []string{"c"}, 2, []string{"c"}, ""},
		{"exactly the limit: the last page", []string{"c", "b"}, 2, []string{"c", "b"}, ""},
		{"one more than the limit: a next page after the last kept", []string{"c", "b", "a"}, 2, []string{"c", "b"}, "b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, next := Cut(c.rows, c.limit, id)
			if !reflect.DeepEqual(got, c.want) || (next == nil) != (c.next == "") || (next != nil && *next != c.next) {
				t.Fatalf("Cut = %v, %v; want %v, %q", got, next, c.want, c.next)
			}
		})
	}
}
