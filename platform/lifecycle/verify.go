package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unique"

	"entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/secret"
)

// Verified is a live credential as the caches keep it: what its "who am I" answer and the
// OAuth surface need of its row beyond the entry's id and project. Up to
// AUTHCORE_CACHE_SIZE are cached, a million on a large deployment (SPEC §24: at most 1 KiB
// each), so it keeps no more than that: the answer is encoded on each request (a kind's
// hot one by hand, in well under a microsecond) rather than kept, which cost ~290 bytes
// an entry.
type Verified struct {
	expires   *time.Time
	own       []any
	createdBy string // "" for none: an id is never empty
	jkt       string // the DPoP key it is bound to, or ""
}

// verifyStore is the bearer.Store of a kind's table.
type verifyStore struct{ l *Lifecycle }

var _ bearer.Store[*Verified] = verifyStore{}

func (s verifyStore) Lookup(ctx context.Context, h database.Handle, d secret.Digest) (*bearer.Entry[*Verified], error) {
	t := s.l.t
	var r *Row
	var err error
	if h.Pool != nil {
		r, err = s.lookupPG(ctx, h.Pool, d)
	} else {
		r, err = t.one(ctx, h.Ent, sql.OrPredicates(sql.FieldEQ("digest", d.Bytes()), sql.FieldEQ("previous_digest", d.Bytes())))
	}
	if errors.Is(err, errNoRow) || errors.Is(err, pgx.ErrNoRows) {
		return nil, bearer.ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	return s.l.entry(r, d)
}

// lookupPG is Lookup through pgx directly: on the cold path the database/sql and ent
// layers cost about as much client CPU as the query itself. Same row, same rules.
func (s verifyStore) lookupPG(ctx context.Context, pool *pgxpool.Pool, d secret.Digest) (*Row, error) {
	sc, dest := s.l.t.dests()
	if err := pool.QueryRow(ctx, s.l.t.lookup, d.Bytes()).Scan(dest...); err != nil {
		return nil, err
	}
	return s.l.t.row(sc)
}

func (s verifyStore) SetLastUsed(ctx context.Context, tx *ent.Tx, id string, at time.Time) error {
	_, err := s.l.t.updateWhere(ctx, tx, sql.EQ(schema.FieldID, id), map[string]any{schema.FieldLastUsedAt: at})
	return err
}

// entry is the cache entry for r presented with digest d: the key d matched and until
// when it works (SPEC §12).
func (l *Lifecycle) entry(r *Row, d secret.Digest) (*bearer.Entry[*Verified], error) {
	key, until := schema.Matched(d.Bytes(), r.digest, r.previous, r.ExpiresAt, r.previousExpires)
	for i, v := range r.own {
		r.own[i] = interned(v)
	}
	v := &Verified{expires: r.ExpiresAt, own: r.own, jkt: l.BoundKey(r)}
	if r.CreatedBy != nil {
		v.createdBy = unique.Make(*r.CreatedBy).Value()
	}
	return &bearer.Entry[*Verified]{ID: r.ID, ProjectID: unique.Make(r.ProjectID).Value(), Digest: key, ExpiresAt: until, Revoked: r.revoked != nil,
		Value: v}, nil
}

// row is the part of a credential's row that its cache entry e keeps.
func (l *Lifecycle) row(e *bearer.Entry[*Verified]) Row {
	v := e.Value
	r := Row{ID: e.ID, ProjectID: e.ProjectID, ExpiresAt: v.expires, own: v.own, t: l.t}
	if v.createdBy != "" {
		r.CreatedBy = &v.createdBy
	}
	return r
}

// interned is v with its strings replaced by one shared copy of each: a cache holds up to
// a million credentials, most of which share their project, names and scopes with others
// (about 45 bytes of heap an entry at 1M tokens). unique's table holds its strings weakly:
// names an entry no longer uses are not kept.
func interned(v any) any {
	switch x := v.(type) {
	case string:
		return unique.Make(x).Value()
	case []string:
		for i, s := range x {
			x[i] = unique.Make(s).Value()
		}
	}
	return v
}

// BoundKey is the thumbprint of the DPoP key r is bound to, or "".
func (l *Lifecycle) BoundKey(r *Row) string {
	if l.spec.BoundField == "" {
		return ""
	}
	return r.String(l.spec.BoundField)
}

// answer is the "who am I" answer of the credential e.
func (l *Lifecycle) answer(e *bearer.Entry[*Verified]) ([]byte, error) {
	r := l.row(e)
	if l.hooks.Answer != nil {
		return l.hooks.Answer(make([]byte, 0, 320), &r)
	}
	return json.Marshal(meAnswer{kind: l.spec.Name, r: &r})
}

// Me checks a bearer secret and returns its "who am I" answer, or
// bearer.ErrInvalid for anything that is not a live credential. Prefix and checksum are
// checked first, so malformed and guessed secrets never reach the caches or the store.
func (l *Lifecycle) Me(ctx context.Context, token string) ([]byte, error) {
	if !l.wellFormed(token) {
		return nil, bearer.ErrInvalid
	}
	e, err := l.verifier.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	return l.answer(e)
}

// MeProven is Me for a request that may carry a DPoP proof (SPEC §22): a credential bound
// to a key answers only with a valid proof by that key for url (GET, ath its hash). The
// check is one signature and this process's memory of jtis and nonces: a warm bound
// credential costs no store round trip. A refusal is bearer.ErrInvalid, wrapping the
// *dpop.Error that says how (a nonce to retry with, or a bad proof).
func (l *Lifecycle) MeProven(ctx context.Context, token, proof, url string) ([]byte, error) {
	if !l.wellFormed(token) {
		return nil, bearer.ErrInvalid
	}
	e, err := l.verifier.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	if e.Value.jkt == "" {
		return l.answer(e)
	}
	if l.deps.DPoP == nil {
		return nil, bearer.ErrInvalid
	}
	p, err := l.deps.DPoP.Verify(proof, dpop.Request{Method: "GET", URL: url, AccessToken: token})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", bearer.ErrInvalid, err)
	}
	if p.JKT != e.Value.jkt {
		// Another key's proof gets nothing: its jti takes no room (RFC 9449 §11.1; a holder
		// of a stolen token could otherwise fill the memory with keys of its own).
		l.deps.DPoP.Release(p)
		return nil, fmt.Errorf("%w: %w", bearer.ErrInvalid, &dpop.Error{Why: "the DPoP proof is by another key than the token is bound to"})
	}
	return l.answer(e)
}

// Grant verifies a presented secret for the OAuth surface (introspection, token
// exchange): the live credential — its id, project, own fields and ExpiresAt, when the
// presented secret stops — a
// replaced one in its grace ends at the grace's end, and so must everything derived from
// it (SPEC §9a). credential.ErrNotLive for anything else.
func (l *Lifecycle) Grant(ctx context.Context, token string) (Row, error) {
	if !l.wellFormed(token) {
		return Row{}, credential.ErrNotLive
	}
	e, err := l.verifier.Verify(ctx, token) // bearer.ErrInvalid is credential.ErrNotLive
	if err != nil {
		return Row{}, err
	}
	r := l.row(e)
	if e.ExpiresAt != nil && (r.ExpiresAt == nil || e.ExpiresAt.Before(*r.ExpiresAt)) {
		r.ExpiresAt = e.ExpiresAt
	}
	return r, nil
}

// Introspect is RFC 7662's answer for a live secret of the kind presented by project's
// resource server (nil otherwise).
func (l *Lifecycle) Introspect(ctx context.Context, token, project string) (map[string]any, error) {
	r, err := l.Grant(ctx, token)
	if errors.Is(err, credential.ErrNotLive) || (err == nil && r.ProjectID != project) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fields := map[string]any{"sub": r.ID, "token_type": "Bearer"}
	if r.ExpiresAt != nil {
		fields["exp"] = r.ExpiresAt.Unix()
	}
	if jkt := l.BoundKey(&r); jkt != "" { // RFC 9449 §6.2
		fields["cnf"], fields["token_type"] = map[string]any{"jkt": jkt}, "DPoP"
	}
	if l.hooks.Introspect != nil {
		l.hooks.Introspect(r, fields)
		return fields, nil
	}
	for i, c := range l.t.own {
		if c.desc == nil || !c.desc.Sensitive {
			fields[c.name] = r.own[i]
		}
	}
	return fields, nil
}

// Limited counts a presentation the failure budget refused (usage, SPEC §19).
func (l *Lifecycle) Limited(token string) { l.verifier.Limited(token) }

// liveness is what Live needs of a credential, cached by id.
type liveness struct {
	revoked   bool
	expiresAt *time.Time
}

// Live reports whether the credential with this id is live, from the by-id cache (a
// revoke anywhere clears its entry in the same transaction's commit): what tokens derived
// from it (an exchanged JWT) are checked against.
func (l *Lifecycle) Live(ctx context.Context, id string) (bool, error) {
	lv, err := l.byID.Load(ctx, id, func(ctx context.Context) (*liveness, error) {
		r, err := database.Read(ctx, l.deps.Kit.Reads, l.idTopic(), id, func(ctx context.Context, h database.Handle) (*Row, error) {
			return l.t.one(ctx, h.Ent, sql.FieldEQ(schema.FieldID, id))
		})
		if errors.Is(err, errNoRow) || database.IsNoRow(err) {
			return &liveness{revoked: true}, nil
		}
		if err != nil {
			return nil, err
		}
		return &liveness{revoked: r.revoked != nil, expiresAt: r.ExpiresAt}, nil
	})
	if err != nil {
		return false, err
	}
	return schema.LiveAt(l.deps.Kit.Clock.Now(), lv.revoked, lv.expiresAt), nil
}
