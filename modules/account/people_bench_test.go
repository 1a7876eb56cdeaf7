package account_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/account"
)

// BenchmarkImportUsers is SPEC §25's import rate (at least 10,000 users a minute) through
// the real route on the first store, beside its baseline in the same run: the same people
// created one POST at a time. Both report users a minute; the hashes are bcrypt's, checked
// for form on import, so neither pays for hashing.
func BenchmarkImportUsers(b *testing.B) {
	a := apptest.Start(b, apptest.Stores(b)[0])
	admin := a.SignUp(b)
	project := a.CreateProject(b, admin)
	hash := account.ImportedHashes(b, "original pw")["bcrypt-2a"]
	// Under the server's 64 KiB per request, as a client importing many batches in a row
	// sends them: only four larger bodies are let in per 15 s (platform/httpserver).
	const batch = 300
	line := func(n int) map[string]any {
		return map[string]any{"email": fmt.Sprintf("bench%d@import.example", n), "passwordHash": hash, "metadata": map[string]any{"name": fmt.Sprint("Bench ", n)}}
	}
	n := 0
	b.Run("import", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var body strings.Builder
			for j := 0; j < batch; j++ {
				n++
				l, _ := json.Marshal(line(n))
				body.Write(append(l, '\n'))
			}
			a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project) + "/import", Body: body.String(), Header: admin.Bearer()}).Expect(b, 200, map[string]any{"failed": 0})
		}
		b.ReportMetric(float64(b.N*batch)/b.Elapsed().Minutes(), "users/min")
	})
	b.Run("one_by_one", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n++
			a.Do(apptest.Req{Method: http.MethodPost, Path: usersPath(project), Body: line(n), Header: admin.Bearer()}).Expect(b, 201, nil)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Minutes(), "users/min")
	})
}
