package scim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// recording is a vendor's request sequence, kept as data in testdata/: what its
// provisioning client sends, in order, and what it must get back.
type recording struct {
	Source     string            `json:"source"`
	Domains    []string          `json:"domains"`
	GroupRoles map[string]string `json:"groupRoles"`
	Steps      []struct {
		Name    string            `json:"name"`
		Method  string            `json:"method"`
		Path    string            `json:"path"`
		Headers map[string]string `json:"headers"`
		Body    any               `json:"body"`
		Status  int               `json:"status"`
		Expect  map[string]any    `json:"expect"`
		Capture map[string]string `json:"capture"`
		// ScimError, when set (even ""), is the scimType of an RFC 7644 error body.
		ScimError *string `json:"scimError"`
		// Person checks the tenant user the first User created is: its address, its role
		// in the org ("" for none), whether it is deprovisioned.
		Person *struct {
			Email         string  `json:"email"`
			Member        *string `json:"member"`
			Deprovisioned *bool   `json:"deprovisioned"`
		} `json:"person"`
	} `json:"steps"`
}

// Okta's and Microsoft Entra's provisioning clients, replayed against the server as
// their documentation records them, on both stores.
func TestRecordedSequences(t *testing.T) {
	for _, vendor := range []string{"okta", "entra"} {
		t.Run(vendor, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/" + vendor + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var rec recording
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) { replay(t, newWorld(t, st), rec) })
		})
	}
}

func replay(t *testing.T, w *world, rec recording) {
	for _, d := range rec.Domains {
		w.verify(t, w.org, d)
	}
	if rec.GroupRoles != nil {
		w.do(http.MethodPatch, w.dirs()+"/"+w.dir, map[string]any{"groupRoles": rec.GroupRoles}).Expect(t, 200, nil)
	}
	vars := map[string]string{}
	fill := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, "{{"+k+"}}", v)
		}
		return s
	}
	person := ""
	for i, step := range rec.Steps {
		var body any
		if step.Body != nil {
			b, _ := json.Marshal(step.Body)
			body = []byte(fill(string(b)))
		}
		h := map[string]string{"Authorization": "Bearer " + w.token, "Content-Type": "application/scim+json", "Accept": "application/scim+json"}
		for k, v := range step.Headers {
			h[k] = v
		}
		res := w.a.Do(apptest.Req{Method: step.Method, Path: w.base + fill(step.Path), Body: body, Header: h})
		where := fmt.Sprintf("step %d (%s)", i+1, step.Name)
		if res.Status != step.Status {
			t.Fatalf("%s: status %d, want %d: %s", where, res.Status, step.Status, res.Body)
		}
		if step.ScimError != nil {
			scimError(t, res, step.Status, *step.ScimError)
		}
		var got map[string]any
		if len(res.Body) > 0 {
			if err := json.Unmarshal(res.Body, &got); err != nil {
				t.Fatalf("%s: %v: %s", where, err, res.Body)
			}
		}
		if step.Expect != nil {
			b, _ := json.Marshal(step.Expect)
			var want map[string]any
			_ = json.Unmarshal([]byte(fill(string(b))), &want)
			if why := subset(want, got); why != "" {
				t.Fatalf("%s: %s\nbody: %s", where, why, res.Body)
			}
		}
		for name, field := range step.Capture {
			s, _ := got[field].(string)
			if s == "" {
				t.Fatalf("%s: nothing to capture at %s: %s", where, field, res.Body)
			}
			vars[name] = s
		}
		if p := step.Person; p != nil {
			if person == "" {
				r, err := w.ent.SCIMResource.Get(t.Context(), vars["userId"])
				if err != nil || r.UserID == nil {
					t.Fatalf("%s: the User's person: %v", where, err)
				}
				person = *r.UserID
			}
			u, err := w.ent.User.Get(t.Context(), person)
			if err != nil {
				t.Fatal(err)
			}
			if p.Email != "" && u.Email != p.Email {
				t.Errorf("%s: person's address %q, want %q", where, u.Email, p.Email)
			}
			if p.Member != nil && w.member(t, person) != *p.Member {
				t.Errorf("%s: role in the org %q, want %q", where, w.member(t, person), *p.Member)
			}
			if p.Deprovisioned != nil && (u.DeprovisionedAt != nil) != *p.Deprovisioned {
				t.Errorf("%s: deprovisioned %v, want %v", where, u.DeprovisionedAt != nil, *p.Deprovisioned)
			}
		}
	}
}

// subset says why got does not hold want ("" when it does): objects by their keys, lists
// element by element and of the same length.
func subset(want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("want an object %v, got %v", w, got)
		}
		for k, v := range w {
			if why := subset(v, g[k]); why != "" {
				return k + ": " + why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("want %d values %v, got %v", len(w), w, got)
		}
		for i := range w {
			if why := subset(w[i], g[i]); why != "" {
				return fmt.Sprintf("[%d]: %s", i, why)
			}
		}
		return ""
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return fmt.Sprintf("want %v, got %v", want, got)
	}
	return ""
}
