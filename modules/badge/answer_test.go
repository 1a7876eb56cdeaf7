package badge

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// The hand-written service-badges/me answer and encoding/json's encoding of the same
// meBody are the same bytes, for any strings and expiry (none, or any year and zone;
// those RFC 3339 cannot write fail both ways).
func FuzzMeMatchesEncodingJSON(f *testing.F) {
	f.Add("bdg_01JABCDEFGHJKMNPQRSTVWXYZ0", "s3", "read", true, int64(1767225600), 0)
	f.Add("\u2028\x00\"\\", "<a&b> é\xff", "", false, int64(-62135596800-1), 3600)
	f.Add("", "", "x", true, int64(253402300800), -86399)
	f.Fuzz(func(t *testing.T, id, product, role string, expires bool, sec int64, offset int) {
		m := meBody{Authenticated: true, Kind: Kind, BadgeID: id, ProjectID: "prj_" + id, Product: product, Role: role}
		if expires {
			at := time.Unix(sec, sec%1000).In(time.FixedZone("z", offset%(48*3600)))
			m.ExpiresAt = &at
		}
		want, werr := json.Marshal(m)
		got, gerr := appendMe([]byte("x"), m)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("errors differ: encoding/json %v, appendMe %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendMe\n%s\nencoding/json\n%s", got, want)
		}
	})
}
