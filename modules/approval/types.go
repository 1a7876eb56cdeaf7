package approval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/authorizationdetailtype"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/jsonbody"
)

// Bounds of a registered type (SPEC §23).
const (
	maxTypes      = 50
	maxTypeName   = 80
	maxSchema     = 16 << 10
	maxDetails    = 10
	maxDetailsLen = 8 << 10
)

// typePattern is what a type may be: RFC 9396 allows any string; a path segment of the
// admin routes must carry it, so URIs are not among them.
var typePattern = regexp.MustCompile(`^[a-z][a-z0-9_.:-]{0,63}$`)

// DetailType is a registered authorization details type as the API shows it.
type DetailType struct {
	ID        string          `json:"id"`
	ProjectID string          `json:"projectId"`
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Schema    json.RawMessage `json:"schema"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

func typeView(r *ent.AuthorizationDetailType) DetailType {
	return DetailType{ID: r.ID, ProjectID: r.ProjectID, Type: r.Type, Name: r.Name, Schema: json.RawMessage(r.Schema),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// compile compiles a JSON Schema (draft 2020-12 unless it says otherwise) that may refer
// to nothing outside itself: no loader is given, so a $ref to a file or a URL fails to
// compile rather than reading it.
func compile(text string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("urn:authcore:authorization-details-type", doc); err != nil {
		return nil, err
	}
	return c.Compile("urn:authcore:authorization-details-type")
}

// parseType reads { type?, name, schema } (type only on create).
func parseType(raw []byte, create bool) (typ, name, schemaText string, err error) {
	f := jsonbody.Read(raw)
	if create {
		typ = f.RequiredString("type")
		if typ != "" && !typePattern.MatchString(typ) {
			f.Fail("type", "must match "+typePattern.String())
		}
	}
	name = f.RequiredString("name")
	switch {
	case name == "":
	case utf8.RuneCountInString(name) > maxTypeName:
		f.Fail("name", fmt.Sprintf("must be at most %d characters", maxTypeName))
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0:
		f.Fail("name", "must not contain control or format characters")
	}
	switch s, st := f.RawObject("schema"); st {
	case jsonbody.OK:
		var b bytes.Buffer
		if err := json.Compact(&b, s); err != nil {
			f.Fail("schema", "must be a JSON object")
			break
		}
		schemaText = b.String()
		if len(schemaText) > maxSchema {
			f.Fail("schema", fmt.Sprintf("must be at most %d bytes", maxSchema))
			break
		}
		if why := checkSchema(schemaText); why != "" {
			f.Fail("schema", why)
		}
	default:
		f.Fail("schema", "required JSON object (a JSON Schema)")
	}
	return typ, name, schemaText, f.Err()
}

// checkSchema says why text cannot describe a type's details, or "": it must compile, and
// describe an object whose fields it names (the console renders details field by field).
func checkSchema(text string) string {
	var top struct {
		Type       any             `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(text), &top); err != nil || top.Type != "object" || len(top.Properties) == 0 || top.Properties[0] != '{' {
		return `must be a JSON Schema of "type": "object" with "properties"`
	}
	if _, err := compile(text); err != nil {
		return "is not a valid JSON Schema: " + firstLine(err.Error())
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func digestOf(text string) string {
	d := sha256.Sum256([]byte(text))
	return hex.EncodeToString(d[:])
}

// detailTypes is the registry of a project's authorization details types (SPEC §23):
// admins register them, and requests' details are checked against them.
type detailTypes struct {
	ent   *ent.Client
	clock clock.Clock
	audit *audit.Recorder
}

const (
	actionTypeCreate = "oauth.authorization_details_type_create"
	actionTypeUpdate = "oauth.authorization_details_type_update"
	actionTypeDelete = "oauth.authorization_details_type_delete"
)

// CreateType registers a type for the project.
func (t detailTypes) CreateType(ctx context.Context, projectID string, actor *string, raw []byte, origin audit.Origin) (DetailType, error) {
	typ, name, text, err := parseType(raw, true)
	if err != nil {
		return DetailType{}, err
	}
	var out *ent.AuthorizationDetailType
	err = database.WithTx(ctx, t.ent, func(tx *ent.Tx) error {
		n, err := tx.AuthorizationDetailType.Query().Where(authorizationdetailtype.ProjectID(projectID)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxTypes {
			return errTooManyKind
		}
		now := t.clock.Now()
		out, err = tx.AuthorizationDetailType.Create().SetProjectID(projectID).SetType(typ).SetName(name).SetSchema(text).
			SetSchemaDigest(digestOf(text)).SetNillableCreatedBy(actor).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if ent.IsConstraintError(err) {
			return errTypeTaken
		}
		if err != nil {
			return err
		}
		_, err = t.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, Action: actionTypeCreate,
			Metadata: map[string]any{"type": typ, "name": name}, Origin: origin})
		return err
	})
	if err != nil {
		return DetailType{}, err
	}
	return typeView(out), nil
}

// UpdateType replaces a type's name and schema. Requests made under the old schema are
// never approved nor served from then on: what a person would approve changed.
func (t detailTypes) UpdateType(ctx context.Context, projectID, typ string, actor *string, raw []byte, origin audit.Origin) (DetailType, error) {
	_, name, text, err := parseType(raw, false)
	if err != nil {
		return DetailType{}, err
	}
	var out *ent.AuthorizationDetailType
	err = database.WithTx(ctx, t.ent, func(tx *ent.Tx) error {
		r, err := tx.AuthorizationDetailType.Query().Where(authorizationdetailtype.ProjectID(projectID), authorizationdetailtype.Type(typ)).Only(ctx)
		if ent.IsNotFound(err) {
			return errNoType
		}
		if err != nil {
			return err
		}
		if out, err = tx.AuthorizationDetailType.UpdateOne(r).SetName(name).SetSchema(text).SetSchemaDigest(digestOf(text)).
			SetUpdatedAt(t.clock.Now()).Save(ctx); err != nil {
			return err
		}
		_, err = t.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, Action: actionTypeUpdate,
			Metadata: map[string]any{"type": typ, "name": name, "schemaChanged": r.SchemaDigest != out.SchemaDigest}, Origin: origin})
		return err
	})
	if err != nil {
		return DetailType{}, err
	}
	return typeView(out), nil
}

// DeleteType removes a type; requests naming it are never approved nor served.
func (t detailTypes) DeleteType(ctx context.Context, projectID, typ string, actor *string, origin audit.Origin) error {
	return database.WithTx(ctx, t.ent, func(tx *ent.Tx) error {
		n, err := tx.AuthorizationDetailType.Delete().Where(authorizationdetailtype.ProjectID(projectID), authorizationdetailtype.Type(typ)).Exec(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errNoType
		}
		_, err = t.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, Action: actionTypeDelete,
			Metadata: map[string]any{"type": typ}, Origin: origin})
		return err
	})
}

// ListTypes is the project's types, oldest first (the order admins registered them).
func (t detailTypes) ListTypes(ctx context.Context, projectID string) ([]DetailType, error) {
	rows, err := t.ent.AuthorizationDetailType.Query().Where(authorizationdetailtype.ProjectID(projectID)).
		Order(authorizationdetailtype.ByID(sql.OrderAsc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]DetailType, len(rows))
	for i, r := range rows {
		out[i] = typeView(r)
	}
	return out, nil
}

// typesOf is the project's registered types named, by type.
func (t detailTypes) typesOf(ctx context.Context, projectID string, names []string) (map[string]*ent.AuthorizationDetailType, error) {
	rows, err := t.ent.AuthorizationDetailType.Query().Where(authorizationdetailtype.ProjectID(projectID), authorizationdetailtype.TypeIn(names...)).All(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]*ent.AuthorizationDetailType, len(rows))
	for _, r := range rows {
		m[r.Type] = r
	}
	return m, nil
}

// checkedDetails are authorization details a client sent, valid for the project's types.
type checkedDetails struct {
	compact string            // the array as sent, compact
	types   []string          // each detail's type, in order
	digests map[string]string // type → the schema digest it was checked against
}

// checkDetails reads RFC 9396 authorization_details (a JSON array of objects, each with
// a type the project registered) and validates each against its type's schema. Empty
// raw is no details.
func (t detailTypes) checkDetails(ctx context.Context, projectID, raw string) (checkedDetails, error) {
	if raw == "" {
		return checkedDetails{compact: "[]", digests: map[string]string{}}, nil
	}
	if len(raw) > maxDetailsLen {
		return checkedDetails{}, invalidDetails(fmt.Sprintf("authorization_details is at most %d bytes", maxDetailsLen))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return checkedDetails{}, invalidDetails("authorization_details is not JSON")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &items); err != nil || b.Bytes()[0] != '[' {
		return checkedDetails{}, invalidDetails("authorization_details must be a JSON array of objects")
	}
	if len(items) == 0 || len(items) > maxDetails {
		return checkedDetails{}, invalidDetails(fmt.Sprintf("authorization_details holds 1 to %d objects", maxDetails))
	}
	out := checkedDetails{compact: b.String(), digests: map[string]string{}}
	for i, item := range items {
		var head struct {
			Type *string `json:"type"`
		}
		if item[0] != '{' || json.Unmarshal(item, &head) != nil || head.Type == nil || *head.Type == "" {
			return checkedDetails{}, invalidDetails(fmt.Sprintf("authorization_details[%d] must be an object with a type", i))
		}
		out.types = append(out.types, *head.Type)
	}
	types, err := t.typesOf(ctx, projectID, out.types)
	if err != nil {
		return checkedDetails{}, err
	}
	for i, item := range items {
		t, ok := types[out.types[i]]
		if !ok {
			return checkedDetails{}, invalidDetails(fmt.Sprintf("authorization_details[%d]: type %q is not registered by this project", i, out.types[i]))
		}
		if err := validate(t.Schema, item); err != nil {
			return checkedDetails{}, invalidDetails(fmt.Sprintf("authorization_details[%d] does not satisfy the schema of %q: %s", i, t.Type, err))
		}
		out.digests[t.Type] = t.SchemaDigest
	}
	return out, nil
}

// validate checks one detail against a type's schema.
func validate(schemaText string, item json.RawMessage) error {
	sch, err := compile(schemaText)
	if err != nil {
		return err // a stored schema compiled when registered; this is the store's fault
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(item))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		// The library's message is a heading and one line per failure ("- at '/amount':
		// got string, want number"); the last line is the most precise.
		lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
		return errors.New(strings.TrimSpace(strings.TrimLeft(lines[len(lines)-1], " -")))
	}
	return nil
}

// stillValid reports whether every type a request's details name still has the schema it
// was checked against.
func (t detailTypes) stillValid(ctx context.Context, projectID string, digests map[string]string) (bool, error) {
	names := make([]string, 0, len(digests))
	for t := range digests {
		names = append(names, t)
	}
	types, err := t.typesOf(ctx, projectID, names)
	if err != nil {
		return false, err
	}
	for t, d := range digests {
		if r, ok := types[t]; !ok || r.SchemaDigest != d {
			return false, nil
		}
	}
	return true, nil
}
