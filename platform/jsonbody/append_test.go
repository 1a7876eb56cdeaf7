package jsonbody

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// The Append functions and encoding/json write the same bytes, and fail on the same
// values: strings of any bytes, nil and empty lists, and times of any year and zone.
func FuzzAppendMatchesEncodingJSON(f *testing.F) {
	f.Add("tok_01J", "db:read", int64(1767225600), int64(0), 0)
	f.Add("\u2028\x00\"\\<a&b>", "é\xff", int64(-62135596800-1), int64(999999999), 3600)
	f.Add("", "", int64(253402300800), int64(1), -86400+1)
	f.Fuzz(func(t *testing.T, s1, s2 string, sec, nsec int64, offset int) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(48*3600)))
		for _, c := range []struct {
			v   any
			got func([]byte) ([]byte, error)
		}{
			{s1, func(b []byte) ([]byte, error) { return AppendString(b, s1) }},
			{[]string{s1, s2}, func(b []byte) ([]byte, error) { return AppendStrings(b, []string{s1, s2}) }},
			{[]string{}, func(b []byte) ([]byte, error) { return AppendStrings(b, []string{}) }},
			{[]string(nil), func(b []byte) ([]byte, error) { return AppendStrings(b, nil) }},
			{tm, func(b []byte) ([]byte, error) { return AppendTime(b, tm) }},
		} {
			want, werr := json.Marshal(c.v)
			got, gerr := c.got([]byte("x"))
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("%#v: errors differ: encoding/json %v, Append %v", c.v, werr, gerr)
			}
			if werr == nil && !bytes.Equal(got, append([]byte("x"), want...)) {
				t.Fatalf("%#v: Append\n%s\nencoding/json\n%s", c.v, got, want)
			}
		}
	})
}
