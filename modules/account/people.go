package account

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/page"
)

// The project's people (SPEC §25): a project admin lists, creates, imports, edits, blocks
// and deletes the users of the project's tenant (whose id is the project's).

// The audit actions of an admin's changes to a person, in the project's trail.
const (
	actionUserCreate  = "user.create"
	actionUserUpdate  = "user.update"
	actionUserBlock   = "user.block"
	actionUserUnblock = "user.unblock"
	actionUserDelete  = "user.delete"
	actionUserImport  = "user.import"
)

const (
	// maxMetadata bounds a person's metadata as stored: it rides in every session/me and
	// userinfo answer and in id_tokens through an app's custom claims.
	maxMetadata = 16 << 10
	// maxImportBody and maxImportLines bound one import: 50,000 lines of about 300 bytes;
	// a larger directory is imported in several requests.
	maxImportBody  = 16 << 20
	maxImportLines = 50_000
	// importChunk users are written per transaction: large enough that a 10,000-user import
	// is a few dozen round trips, small enough that a chunk's parameters stay well under
	// PostgreSQL's 65,535 bind parameters and SQLite's 32,766.
	importChunk = 500
	maxQuery    = 200
)

var (
	errUserNotFound = apperr.NotFound("no such user in this project")
	errDuplicateRow = apperr.Conflict("email_taken", "an earlier line of this import has this address")
)

// newUserFields are the members a new person's body (or import line) may hold; any other
// is refused, so that a misspelt passwordHash never imports a person without one.
var newUserFields = []string{"email", "password", "passwordHash", "emailVerified", "metadata"}

var patchFields = []string{"email", "emailVerified", "metadata", "blocked"}

// Person is a user as a project admin sees them: never a password hash.
type Person struct {
	ID            string         `json:"id"`
	TenantID      string         `json:"tenantId"`
	Email         string         `json:"email"`
	EmailVerified bool           `json:"emailVerified"`
	Name          *string        `json:"name"`
	Metadata      map[string]any `json:"metadata"`
	Blocked       bool           `json:"blocked"`
	BlockedAt     *time.Time     `json:"blockedAt"`
	// DeprovisionedAt is set while the person's org directory has them deactivated (SPEC
	// §27); only the directory clears it.
	DeprovisionedAt *time.Time `json:"deprovisionedAt"`
	HasPassword     bool       `json:"hasPassword"`
	CreatedAt       time.Time  `json:"createdAt"`
}

func personOf(u *ent.User) Person {
	p := Person{ID: u.ID, TenantID: u.TenantID, Email: u.Email, EmailVerified: u.EmailVerified, Name: nameOf(u.Metadata),
		Metadata: exactMetadata(u.Metadata), Blocked: u.BlockedAt != nil, HasPassword: u.PasswordHash != "", CreatedAt: u.CreatedAt.UTC()}
	if p.Metadata == nil {
		p.Metadata = map[string]any{}
	}
	if u.BlockedAt != nil {
		t := u.BlockedAt.UTC()
		p.BlockedAt = &t
	}
	if u.DeprovisionedAt != nil {
		t := u.DeprovisionedAt.UTC()
		p.DeprovisionedAt = &t
	}
	return p
}

// exactMetadata is the metadata object with its numbers as written (json.Number): an
// admin reads back the integer they stored, however large.
func exactMetadata(metadata string) map[string]any {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(metadata))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return nil
	}
	return m
}

// newPerson is a validated body of POST …/users or one import line.
type newPerson struct {
	Email string
	// Password is a plain password to hash; Hash an imported one (parseImportedHash
	// accepted it). At most one is set; with neither, the person signs in another way.
	Password, Hash string
	Verified       bool
	Metadata       string
}

func readNewPerson(body []byte) (newPerson, error) {
	f := jsonbody.Read(body)
	for name := range f.Object {
		if !slices.Contains(newUserFields, name) {
			f.Fail(name, "not a field of a user")
		}
	}
	var in newPerson
	if s, st := f.String("email"); st != jsonbody.OK {
		f.Fail("email", "required string")
	} else if addr, ok := identity.NormalizeEmail(s); !ok {
		f.Fail("email", "not a valid email address")
	} else {
		in.Email = addr
	}
	password, pst := f.String("password")
	hash, hst := f.String("passwordHash")
	switch {
	case pst != jsonbody.Absent && hst != jsonbody.Absent:
		f.Fail("passwordHash", "give password or passwordHash, not both")
	case pst == jsonbody.OK:
		if reason := checkPassword(password); reason != "" {
			f.Fail("password", reason)
		}
		in.Password = password
	case pst != jsonbody.Absent:
		f.Fail("password", "must be a string")
	case hst == jsonbody.OK:
		if _, err := parseImportedHash(hash); err != nil {
			f.Fail("passwordHash", "not a supported hash: bcrypt, argon2id, scrypt, PBKDF2 (PHC strings) or Firebase scrypt")
		}
		in.Hash = hash
	case hst != jsonbody.Absent:
		f.Fail("passwordHash", "must be a string")
	}
	switch v, st := f.Bool("emailVerified"); st {
	case jsonbody.OK:
		in.Verified = v
	case jsonbody.Null, jsonbody.WrongType:
		f.Fail("emailVerified", "must be a boolean")
	}
	in.Metadata = "{}"
	if _, present := f.Object["metadata"]; present {
		md, issue := mergeMetadata("{}", f.Object["metadata"])
		if issue != "" {
			f.Fail("metadata", issue)
		}
		in.Metadata = md
	}
	if err := f.Err(); err != nil {
		return newPerson{}, err
	}
	return in, nil
}

// mergeMetadata applies patch, a JSON object, to the metadata text as RFC 7396 says:
// members merge into objects, null removes one. Hand-written: the merge is the RFC's ten
// lines, and no JSON merge patch library is among this module's dependencies. Numbers stay
// json.Number, so an integer larger than 2^53 survives unrounded.
func mergeMetadata(current string, patch json.RawMessage) (string, string) {
	var p any
	d := json.NewDecoder(bytes.NewReader(patch))
	d.UseNumber()
	if err := d.Decode(&p); err != nil {
		return "", "must be a JSON object"
	}
	if _, ok := p.(map[string]any); !ok {
		return "", "must be a JSON object"
	}
	if !finite(p) {
		// Kept as written here, but userinfo, id_tokens and sessions read metadata as
		// float64: a number beyond it would make every one of them drop the whole object.
		return "", "numbers must fit a double (about ±1.8e308)"
	}
	var cur any
	d = json.NewDecoder(strings.NewReader(current))
	d.UseNumber()
	if d.Decode(&cur) != nil {
		cur = nil // unreadable metadata (seed: tolerated) is replaced
	}
	b, err := json.Marshal(mergePatch(cur, p))
	if err != nil {
		return "", "must be a JSON object"
	}
	if len(b) > maxMetadata {
		return "", "must be at most 16 KiB of JSON"
	}
	return string(b), ""
}

func finite(v any) bool {
	switch v := v.(type) {
	case json.Number:
		_, err := v.Float64()
		return err == nil
	case map[string]any:
		for _, m := range v {
			if !finite(m) {
				return false
			}
		}
	case []any:
		for _, m := range v {
			if !finite(m) {
				return false
			}
		}
	}
	return true
}

func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergePatch(t[k], v)
		}
	}
	return t
}

// people administers a project's users.
type people struct {
	svc      *Service
	ent      *ent.Client
	guard    *guard.Guard
	clock    clock.Clock
	sessions identity.Sessions
	// grants ends a person's OAuth grants when they are blocked or deleted; nil without
	// the authorize module.
	grants oauth.GrantEnder
	// prior drops the person's other ways in (linked identities, second factors, passkeys)
	// with them.
	prior []identity.PriorCredentials
}

// peopleRoutes are SPEC §25's: admins of the project, a recent sign-in for every change.
func peopleRoutes(h handlerParams) []httpserver.Route {
	admin := []fiber.Handler{h.Guard.Dashboard(), h.Guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	return people{svc: h.Svc, ent: h.Ent, guard: h.Guard, clock: h.Clock, sessions: h.Sessions, grants: h.Grants, prior: h.Prior}.routes(admin)
}

func (p people) routes(admin []fiber.Handler) []httpserver.Route {
	const (
		users  = "/v1/projects/:id/users"
		person = users + "/:userId"
	)
	r := func(method, path string, h fiber.Handler) httpserver.Route {
		return httpserver.Route{Method: method, Path: path, Handlers: append(slices.Clone(admin), h)}
	}
	imp := r(http.MethodPost, users+"/import", p.guard.Recently(p.importPeople))
	imp.BodyLimit = maxImportBody
	return []httpserver.Route{
		r(http.MethodGet, users, p.list),
		r(http.MethodPost, users, p.guard.Recently(p.create)),
		imp,
		r(http.MethodGet, person, p.get),
		r(http.MethodPatch, person, p.guard.Recently(p.update)),
		r(http.MethodDelete, person, p.guard.Recently(p.remove)),
	}
}

func (p people) record(c *fiber.Ctx, tx *ent.Tx, action string, md map[string]any) error {
	_, err := p.svc.audit.Record(c.UserContext(), tx, audit.Event{ActorID: guard.ActorOf(c), ProjectID: guard.ProjectOf(c), Action: action,
		Origin: httpserver.Origin(c), Metadata: md})
	return err
}

// list pages through the project's people, newest first; query matches the start of an
// address or of metadata.name, ignoring case.
func (p people) list(c *fiber.Ctx) error {
	limit := httpserver.QueryLimit(c.Query("limit"), 50, 100)
	q := p.ent.User.Query().Where(user.TenantID(guard.ProjectOf(c)))
	if cur := c.Query("cursor"); cur != "" {
		q = q.Where(user.IDLT(cur))
	}
	if s := strings.ToLower(strings.TrimSpace(c.Query("query"))); s != "" {
		if utf8.RuneCountInString(s) > maxQuery {
			return apperr.BadRequest("invalid_query", "query must be at most 200 characters")
		}
		q = q.Where(matching(s))
	}
	rows, err := q.Order(user.ByID(sql.OrderDesc())).Limit(limit + 1).All(c.UserContext())
	if err != nil {
		return err
	}
	rows, next := page.Cut(rows, limit, func(u *ent.User) string { return u.ID })
	out := make([]Person, len(rows))
	for i, u := range rows {
		out[i] = personOf(u)
	}
	return c.JSON(fiber.Map{"users": out, "nextCursor": next})
}

// matching finds s at the start of an address or of a name. Metadata is JSON text that
// this module alone writes, always with encoding/json (compact, so `"name":"` is how a
// name begins), so the name's start is a case-insensitive match of that text; a "name" in
// a nested object matches too, which a search box can live with.
func matching(s string) predicate.User {
	enc, _ := json.Marshal(s)
	return user.Or(user.EmailHasPrefix(s), user.MetadataContainsFold(`"name":`+strings.TrimSuffix(string(enc), `"`)))
}

func (p people) row(ctx context.Context, c *ent.UserClient, tenant, id string) (*ent.User, error) {
	u, err := c.Query().Where(user.ID(id), user.TenantID(tenant)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errUserNotFound
	}
	return u, err
}

func (p people) get(c *fiber.Ctx) error {
	u, err := p.row(c.UserContext(), p.ent.User, guard.ProjectOf(c), c.Params("userId"))
	if err != nil {
		return err
	}
	return c.JSON(personOf(u))
}

// passwordHashOf is what a new person's password_hash column holds.
func (p people) passwordHashOf(ctx context.Context, in newPerson) (string, error) {
	if in.Password != "" {
		return p.svc.hash.Hash(ctx, in.Password)
	}
	return in.Hash, nil
}

func (p people) create(c *fiber.Ctx) error {
	in, err := readNewPerson(c.Body())
	if err != nil {
		return err
	}
	hash, err := p.passwordHashOf(c.UserContext(), in)
	if err != nil {
		return err
	}
	var u *ent.User
	err = database.WithTx(c.UserContext(), p.ent, func(tx *ent.Tx) error {
		if u, err = tx.User.Create().SetTenantID(guard.ProjectOf(c)).SetEmail(in.Email).SetPasswordHash(hash).
			SetMetadata(in.Metadata).SetEmailVerified(in.Verified).Save(c.UserContext()); err != nil {
			return err
		}
		return p.record(c, tx, actionUserCreate, map[string]any{"userId": u.ID, "imported": in.Hash != ""})
	})
	if ent.IsConstraintError(err) {
		return errEmailTaken
	}
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(personOf(u))
}

// update applies PATCH { email?, emailVerified?, metadata?, blocked? }. Blocking ends the
// person's grants in the same transaction and their sessions as it commits (with
// back-channel logout to every app they touched); a new address is unproven unless the
// body says emailVerified.
func (p people) update(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	for name := range f.Object {
		if !slices.Contains(patchFields, name) {
			f.Fail(name, "not a field a project admin changes")
		}
	}
	var email *string
	if s, st := f.String("email"); st == jsonbody.OK {
		if addr, ok := identity.NormalizeEmail(s); ok {
			email = &addr
		} else {
			f.Fail("email", "not a valid email address")
		}
	} else if st != jsonbody.Absent {
		f.Fail("email", "must be a string")
	}
	var verified, blocked *bool
	for name, into := range map[string]**bool{"emailVerified": &verified, "blocked": &blocked} {
		if v, st := f.Bool(name); st == jsonbody.OK {
			*into = &v
		} else if st != jsonbody.Absent {
			f.Fail(name, "must be a boolean")
		}
	}
	patch, hasPatch := f.Object["metadata"]
	if hasPatch {
		if _, issue := mergeMetadata("{}", patch); issue != "" {
			f.Fail("metadata", issue)
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	ctx, tenant, id := c.UserContext(), guard.ProjectOf(c), c.Params("userId")
	var u *ent.User
	ended, nowBlocked := 0, false
	err := database.WithTx(ctx, p.ent, func(tx *ent.Tx) error {
		before, err := p.row(ctx, tx.User, tenant, id)
		if err != nil {
			return err
		}
		upd := tx.User.UpdateOne(before)
		changed := []string{}
		if email != nil && *email != before.Email {
			upd.SetEmail(*email).SetEmailVerified(false)
			changed = append(changed, "email")
		}
		if verified != nil {
			upd.SetEmailVerified(*verified)
			changed = append(changed, "emailVerified")
		}
		if hasPatch {
			// Within the transaction: on PostgreSQL the row read above is updated only if
			// it is still the one read (the metadata compared below), so two merges at once
			// cannot drop each other's members; SQLite's writers are serial anyway.
			md, _ := mergeMetadata(before.Metadata, patch)
			upd = upd.Where(user.Metadata(before.Metadata)).SetMetadata(md)
			changed = append(changed, "metadata")
		}
		action := actionUserUpdate
		// Every blocked: true ends what the person holds, not only the first: a revoke that
		// failed after an earlier block commits is retried by sending the block again.
		nowBlocked = blocked != nil && *blocked
		switch {
		case nowBlocked && before.BlockedAt == nil:
			upd.SetBlockedAt(p.clock.Now())
			action = actionUserBlock
		case blocked != nil && !*blocked && before.BlockedAt != nil:
			upd.ClearBlockedAt()
			action = actionUserUnblock
		}
		if u, err = upd.Save(ctx); err != nil {
			if ent.IsNotFound(err) {
				return apperr.Conflict("concurrent_update", "the user changed meanwhile: read it again and retry")
			}
			return err
		}
		if nowBlocked && p.grants != nil {
			if ended, err = p.grants.EndGrants(ctx, tx, oauth.GrantsOf{UserID: id}, oauth.GrantEnding{ActorID: guard.ActorOf(c),
				Reason: "user_blocked", Origin: httpserver.Origin(c)}); err != nil {
				return err
			}
		}
		if len(changed) == 0 && action == actionUserUpdate && ended == 0 {
			return nil
		}
		return p.record(c, tx, action, map[string]any{"userId": id, "changed": changed, "grantsEnded": ended})
	})
	if ent.IsConstraintError(err) {
		return errEmailTaken
	}
	if err != nil {
		return err
	}
	if nowBlocked {
		// After the commit, which Admit reads: no session starts from here on, and those
		// that did before end now, on every replica.
		if _, err := p.sessions.RevokeUser(ctx, id, ""); err != nil {
			return err
		}
	}
	return c.JSON(personOf(u))
}

// remove deletes a person and revokes everything issued to them: sessions (with
// back-channel logout), OAuth grants and their tokens, linked identities, second factors.
func (p people) remove(c *fiber.Ctx) error {
	ctx, tenant, id := c.UserContext(), guard.ProjectOf(c), c.Params("userId")
	if _, err := p.row(ctx, p.ent.User, tenant, id); err != nil {
		return err
	}
	revoked, err := p.sessions.RevokeUser(ctx, id, "")
	if err != nil {
		return err
	}
	ended := 0
	err = database.WithTx(ctx, p.ent, func(tx *ent.Tx) error {
		if _, err := p.row(ctx, tx.User, tenant, id); err != nil {
			return err
		}
		if p.grants != nil {
			if ended, err = p.grants.EndGrants(ctx, tx, oauth.GrantsOf{UserID: id}, oauth.GrantEnding{ActorID: guard.ActorOf(c),
				Reason: "user_deleted", Origin: httpserver.Origin(c)}); err != nil {
				return err
			}
		}
		dropped := map[string]any{}
		for _, pc := range p.prior {
			kind, n, err := pc.DropPrior(ctx, tx, id)
			if err != nil {
				return err
			}
			dropped[kind] = n
		}
		if err := tx.User.DeleteOneID(id).Exec(ctx); err != nil {
			return err
		}
		return p.record(c, tx, actionUserDelete, map[string]any{"userId": id, "sessionsRevoked": revoked, "grantsEnded": ended, "dropped": dropped})
	})
	if err != nil {
		return err
	}
	// A sign-in that passed Admit before the commit may have started a session since the
	// first revoke; Admit refuses every later one.
	n, err := p.sessions.RevokeUser(ctx, id, "")
	if err != nil {
		return err
	}
	revoked += n
	return c.JSON(fiber.Map{"ok": true, "userId": id, "sessionsRevoked": revoked, "grantsEnded": ended})
}

// importLine is one line of an import's report: the new user's id, or why the line was
// refused (nothing of a refused line is written).
type importLine struct {
	Line   int            `json:"line"`
	UserID string         `json:"userId,omitempty"`
	Error  map[string]any `json:"error,omitempty"`
}

func lineError(err error) map[string]any {
	e, ok := apperr.As(err)
	if !ok {
		return map[string]any{"code": "internal_error", "message": "internal error"}
	}
	m := map[string]any{"code": e.Code, "message": e.Message}
	for k, v := range e.Fields {
		m[k] = v
	}
	return m
}

type parsedLine struct {
	line int
	in   newPerson
	hash string
}

// importPeople reads JSON Lines, one POST …/users body per line, and writes every valid
// line; the report says, line by line, the user made or the refusal. Blank lines are
// skipped (a trailing newline is not a line).
func (p people) importPeople(c *fiber.Ctx) error {
	ctx, tenant := c.UserContext(), guard.ProjectOf(c)
	lines := bytes.Split(c.Body(), []byte("\n"))
	if len(lines) > maxImportLines {
		return apperr.Validation(apperr.Issue{Field: "body", Reason: "must be at most 50000 lines: import in several requests"})
	}
	report := []importLine{}
	seen := map[string]bool{}
	var ok []parsedLine
	for i, raw := range lines {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		in, err := readNewPerson(raw)
		if err == nil && seen[in.Email] {
			err = errDuplicateRow
		}
		if err != nil {
			report = append(report, importLine{Line: i + 1, Error: lineError(err)})
			continue
		}
		seen[in.Email] = true
		ok = append(ok, parsedLine{line: i + 1, in: in})
	}
	if len(ok) == 0 && len(report) == 0 {
		return apperr.Validation(apperr.Issue{Field: "body", Reason: "must be JSON Lines: one user object per line"})
	}
	imported := 0
	for start := 0; start < len(ok); start += importChunk {
		chunk := ok[start:min(start+importChunk, len(ok))]
		for i := range chunk {
			h, err := p.passwordHashOf(ctx, chunk[i].in)
			if err != nil {
				return err
			}
			chunk[i].hash = h
		}
		written, err := p.writeChunk(c, tenant, chunk)
		if err != nil {
			return err
		}
		for _, l := range written {
			if l.UserID != "" {
				imported++
			}
		}
		report = append(report, written...)
	}
	slices.SortFunc(report, func(a, b importLine) int { return a.Line - b.Line })
	return c.JSON(fiber.Map{"imported": imported, "failed": len(report) - imported, "lines": report})
}

// writeChunk writes a chunk of valid lines in one transaction: addresses the tenant holds
// already are refused as email_taken, the others inserted in one statement. A sign-up of
// one of the addresses between the check and the insert fails the statement; the chunk is
// then written again line by line, so each line still either is written whole or not.
func (p people) writeChunk(c *fiber.Ctx, tenant string, chunk []parsedLine) ([]importLine, error) {
	ctx := c.UserContext()
	var out []importLine
	err := database.WithTx(ctx, p.ent, func(tx *ent.Tx) error {
		out = out[:0]
		emails := make([]string, len(chunk))
		for i, l := range chunk {
			emails[i] = l.in.Email
		}
		taken, err := tx.User.Query().Where(user.TenantID(tenant), user.EmailIn(emails...)).Select(user.FieldEmail).Strings(ctx)
		if err != nil {
			return err
		}
		var creates []*ent.UserCreate
		var fresh []parsedLine
		for _, l := range chunk {
			if slices.Contains(taken, l.in.Email) {
				out = append(out, importLine{Line: l.line, Error: lineError(errEmailTaken)})
				continue
			}
			fresh = append(fresh, l)
			creates = append(creates, tx.User.Create().SetTenantID(tenant).SetEmail(l.in.Email).SetPasswordHash(l.hash).
				SetMetadata(l.in.Metadata).SetEmailVerified(l.in.Verified))
		}
		if len(creates) == 0 {
			return nil
		}
		rows, err := tx.User.CreateBulk(creates...).Save(ctx)
		if err != nil {
			return err
		}
		for i, u := range rows {
			out = append(out, importLine{Line: fresh[i].line, UserID: u.ID})
		}
		return p.record(c, tx, actionUserImport, map[string]any{"imported": len(rows), "firstLine": chunk[0].line, "lastLine": chunk[len(chunk)-1].line})
	})
	if !ent.IsConstraintError(err) {
		return out, err
	}
	out = out[:0]
	for _, l := range chunk {
		var u *ent.User
		err := database.WithTx(ctx, p.ent, func(tx *ent.Tx) error {
			var err error
			if u, err = tx.User.Create().SetTenantID(tenant).SetEmail(l.in.Email).SetPasswordHash(l.hash).
				SetMetadata(l.in.Metadata).SetEmailVerified(l.in.Verified).Save(ctx); err != nil {
				return err
			}
			return p.record(c, tx, actionUserImport, map[string]any{"imported": 1, "firstLine": l.line, "lastLine": l.line})
		})
		switch {
		case ent.IsConstraintError(err):
			out = append(out, importLine{Line: l.line, Error: lineError(errEmailTaken)})
		case err != nil:
			return nil, err
		default:
			out = append(out, importLine{Line: l.line, UserID: u.ID})
		}
	}
	return out, nil
}
