// Package page cuts keyset pages, newest first, whose cursor is the id of the last row
// shown (ids sort by creation, so the cursor is stable while rows are added). It reads no
// store: each list queries its own table, limit+1 rows older than the cursor.
package page

// Cut keeps limit of rows read newest first, limit+1 of them (the extra one tells whether
// another page follows), and names the next page's cursor: the id of the last row kept,
// nil on the last page.
func Cut[T any](rows []T, limit int, id func(T) string) ([]T, *string) {
	if len(rows) <= limit {
		return rows, nil
	}
	last := id(rows[limit-1])
	return rows[:limit], &last
}
