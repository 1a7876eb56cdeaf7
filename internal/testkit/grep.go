package testkit

import "strings"

// GrepLines is the lines of s that contain sub: the part of a /metrics page or a log a
// failing test shows.
func GrepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
