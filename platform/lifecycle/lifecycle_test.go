package lifecycle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	entgo "entgo.io/ent"
	"entgo.io/ent/schema/field"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/secret"
)

// everyType is a kind's schema with a field of every type a kind's own field may have.
type everyType struct{ entgo.Schema }

func (everyType) Fields() []entgo.Field {
	return []entgo.Field{
		field.String("label").NotEmpty().MaxLen(10),
		field.String("note").Optional().Nillable(),
		field.Enum("tier").Values("free", "paid"),
		field.JSON("tags", []string{}),
		field.Bool("read_only").Default(true),
		field.Int("max_uses").Optional(),
		field.Float("weight").Default(1.5),
		field.Time("not_before").Default(func() time.Time { return time.Unix(0, 0) }),
		field.String("seal").Sensitive().Default("s"),
	}
}

func newTestLifecycle(t *testing.T, m schema.KindMixin) *Lifecycle {
	t.Helper()
	tbl, err := newTable("every_types", config.SQLite, m, everyType{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	return &Lifecycle{spec: Spec{Name: "every_type", Prefixes: []string{"et"}}, t: tbl, deps: Deps{Kit: bearer.Kit{Clock: clock.NewFake(now)}}}
}

// A mint's body is read field by field as the kind's schema declares them: defaults,
// optional fields, types, validators, and every issue listed at once.
func TestParseMint(t *testing.T) {
	l := newTestLifecycle(t, schema.KindMixin{IDPrefix: "et_"})
	m, err := l.ParseMint([]byte(`{"label":"ci","tier":"paid","tags":["a","b"],"maxUses":3,"notBefore":"2026-01-02T03:04:05Z","unknown":1,"expiresInDays":365}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Own["label"] != "ci" || m.Own["note"] != nil || m.Own["read_only"] != true || m.Own["weight"] != 1.5 || m.Own["max_uses"] != int64(3) ||
		m.Own["not_before"] != time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) || strings.Join(m.Own["tags"].([]string), ",") != "a,b" || m.Own["seal"] != "s" {
		t.Fatalf("%#v", m.Own)
	}
	if want := time.Date(2027, 11, 25, 12, 0, 0, 0, time.UTC); m.ExpiresAt == nil || !m.ExpiresAt.Equal(want) {
		t.Fatalf("expires %v", m.ExpiresAt)
	}
	if m, err := l.ParseMint([]byte(`{"label":"x","tier":"free","note":null}`)); err != nil || m.ExpiresAt != nil || len(m.Own["tags"].([]string)) != 0 {
		t.Fatalf("defaults: %v %#v", err, m)
	}
	for body, fields := range map[string]string{
		``:                                       "body",
		`[]`:                                     "body",
		`{}`:                                     "label,tier",
		`{"label":"","tier":"free"}`:             "label",
		`{"label":"01234567890","tier":"free"}`:  "label",
		`{"label":"a\tb","tier":"free"}`:         "label",
		`{"label":1,"tier":"gold"}`:              "label,tier",
		`{"label":"x","tier":"free","tags":"a"}`: "tags",
		`{"label":"x","tier":"free","readOnly":"yes"}`:       "readOnly",
		`{"label":"x","tier":"free","maxUses":1.5}`:          "maxUses",
		`{"label":"x","tier":"free","weight":"1"}`:           "weight",
		`{"label":"x","tier":"free","notBefore":"tomorrow"}`: "notBefore",
		`{"label":"x","tier":"free","expiresInDays":0}`:      "expiresInDays",
		`{"label":"x","tier":"free","expiresInDays":366}`:    "expiresInDays",
		`{"label":"x","tier":"free","expiresInDays":null}`:   "expiresInDays",
	} {
		_, err := l.ParseMint([]byte(body))
		e, ok := apperr.As(err)
		if !ok || e.Code != "validation_failed" {
			t.Errorf("%s: %v", body, err)
			continue
		}
		var got []string
		for _, is := range e.Fields["issues"].([]apperr.Issue) {
			got = append(got, is.Field)
		}
		if strings.Join(got, ",") != fields {
			t.Errorf("%s: issues on %v, want %s", body, got, fields)
		}
	}
	must := newTestLifecycle(t, schema.KindMixin{IDPrefix: "et_", ExpiresRequired: true})
	if _, err := must.ParseMint([]byte(`{"label":"x","tier":"free"}`)); err == nil {
		t.Fatal("a kind whose credentials must expire took a mint without expiresInDays")
	}
}

// A record and a default who-am-I answer are the kind's fields in its schema's order, by
// their JSON names, never a sensitive one; the schema the API document gets says the same.
func TestRecordAndSchema(t *testing.T) {
	l := newTestLifecycle(t, schema.KindMixin{IDPrefix: "et_", Hint: "key_hint"})
	note := "n"
	r := &Row{ID: "et_1", ProjectID: "prj_1", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Hint: "ac_et_abcd…wxyz", t: l.t,
		own: []any{"ci", &note, "paid", []string{"a"}, true, int64(0), 1.5, time.Date(2026, 1, 2, 0, 0, 0, 0, time.FixedZone("x", 3600)), "secret"}}
	b, err := json.Marshal(Record{Row: r})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"et_1","projectId":"prj_1","label":"ci","note":"n","tier":"paid","tags":["a"],"readOnly":true,"maxUses":0,"weight":1.5,` +
		`"notBefore":"2026-01-01T23:00:00Z","createdBy":null,"createdAt":"2026-01-01T00:00:00Z","expiresAt":null,"lastUsedAt":null,` +
		`"usage24h":{"ok":0,"denied":0,"rateLimited":0},"keyHint":"ac_et_abcd…wxyz"}`
	if string(b) != want {
		t.Fatalf("record\n%s\nwant\n%s", b, want)
	}
	e, err := l.entry(r, secret.DigestOf("ac_et_x")) // the answer is of what the cache keeps
	if err != nil {
		t.Fatal(err)
	}
	me, _ := l.answer(e)
	if !strings.HasPrefix(string(me), `{"authenticated":true,"kind":"every_type","id":"et_1","projectId":"prj_1","label":"ci"`) || strings.Contains(string(me), "secret") {
		t.Fatalf("me %s", me)
	}
	f := l.Fragment(Kind{Spec: l.spec, Path: "every-types"}.Routes())
	rec := f.Components["schemas"]["EveryType"].(map[string]any)
	if _, ok := rec["properties"].(map[string]any)["seal"]; ok {
		t.Fatal("the document shows a sensitive field")
	}
	note2 := rec["properties"].(map[string]any)["note"].(map[string]any)
	if ty, _ := note2["type"].([]any); len(ty) != 2 || ty[1] != "null" {
		t.Fatalf("an optional field's schema %v", note2)
	}
	if req := f.Components["schemas"]["EveryTypeMint"].(map[string]any)["required"].([]string); strings.Join(req, ",") != "label,tier" {
		t.Fatalf("mint requires %v", req)
	}
	for _, p := range []string{"/v1/projects/{id}/every-types", "/v1/projects/{id}/every-types/{everyTypeId}", "/v1/projects/{id}/every-types/{everyTypeId}/roll", "/v1/every-types/me"} {
		if f.Paths[p] == nil {
			t.Errorf("no %s in %v", p, f.Paths)
		}
	}
}
