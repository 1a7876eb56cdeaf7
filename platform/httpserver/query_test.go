package httpserver

import "testing"

func TestQueryLimit(t *testing.T) {
	for raw, want := range map[string]int{
		"": 50, "abc": 50, "Infinity": 50, "-Infinity": 50, "NaN": 50, "1e999": 50,
		"0": 1, "-5": 1, "0.5": 1, "1": 1, "1.9": 1, "2": 2, "499": 499, "500": 500, "501": 500, "1e9": 500,
	} {
		if got := QueryLimit(raw, 50, 500); got != want {
			t.Errorf("QueryLimit(%q) = %d, want %d", raw, got, want)
		}
	}
}
