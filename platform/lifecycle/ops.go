package lifecycle

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/rollover"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// errNotFound is the default answer to a revoke or roll of what is not a live
// credential of the project: unknown, revoked, expired or another project's, all alike.
var errNotFound = apperr.NotFound("no such live credential in this project")

// errGone is what the transactions below say when nothing matched; the public methods
// answer it as the kind says.
var errGone = errors.New("no live credential matched")

// Mint is a credential to create.
type Mint struct {
	ProjectID string
	Creator   *string
	ExpiresAt *time.Time // nil: never (a kind whose credentials must expire refuses it)
	// Own are the values of the kind's own fields, by column.
	Own map[string]any
	// Key is the prefix x of its secret, for a kind of several; "" for the kind's one.
	Key    string
	Origin audit.Origin
	// Options are what the Minted hook is handed beside the row: what the request asked
	// of the credential's owner (a badge product's own fields), checked already.
	Options any
	// Metadata is added to the create's audit metadata.
	Metadata map[string]any
}

// Issued is a credential with its one-time secret, and what the Minted or Rolled hook
// returned beside it.
type Issued struct {
	Row       *Row
	Plaintext string
	Extra     any
}

// Rolled is a credential with its new secret, and when the replaced one stops.
type Rolled struct {
	Issued
	PreviousSecretExpiresAt time.Time
}

// known reports whether err is already an answer (an apperr of the contract), which the
// lifecycle passes on as it is.
func known(err error) bool {
	_, ok := apperr.As(err)
	return ok
}

func (l *Lifecycle) key(r *Row) string {
	if l.hooks.Key != nil {
		return l.hooks.Key(r)
	}
	return l.spec.Prefixes[0]
}

func (l *Lifecycle) label(r *Row) string {
	if l.hooks.Label != nil {
		return l.hooks.Label(r)
	}
	return ""
}

// Mint creates a credential: its row (the secret's digest, never the secret), what the
// Minted hook adds and its audit record (and so its webhook event) commit together.
func (l *Lifecycle) Mint(ctx context.Context, m Mint) (Issued, error) {
	key := m.Key
	if key == "" {
		key = l.spec.Prefixes[0]
	}
	plaintext, err := secret.NewToken(key)
	if err != nil {
		return Issued{}, l.failed("create", err)
	}
	r := &Row{ID: schema.NewID(l.spec.Table.Mixin.IDPrefix), ProjectID: m.ProjectID, CreatedBy: m.Creator,
		CreatedAt: l.deps.Kit.Clock.Now().UTC(), ExpiresAt: utc(m.ExpiresAt), Hint: secret.Hint(plaintext),
		digest: secret.DigestOf(plaintext).Bytes(), t: l.t, own: make([]any, len(l.t.own))}
	for i, c := range l.t.own {
		r.own[i] = m.Own[c.name]
	}
	var extra any
	err = database.WithTx(ctx, l.ent, func(tx *ent.Tx) error {
		if err := l.t.insert(ctx, tx, r); err != nil {
			return err
		}
		if l.hooks.Minted != nil {
			var err error
			if extra, err = l.hooks.Minted(ctx, tx, r, m.Options); err != nil {
				return err
			}
		}
		md := map[string]any{l.spec.idField(): r.ID}
		if l.hooks.CreateMetadata != nil {
			maps.Copy(md, l.hooks.CreateMetadata(r))
		} else {
			for i, c := range l.t.own {
				md[camel(c.name)] = r.own[i]
			}
		}
		maps.Copy(md, m.Metadata)
		_, err := l.deps.Audit.Record(ctx, tx, audit.Event{ActorID: m.Creator, ProjectID: m.ProjectID, OrgID: l.orgOf(r), Action: l.spec.action("create"),
			Metadata: md, Origin: m.Origin})
		return err
	})
	if err != nil {
		if known(err) {
			return Issued{}, err
		}
		return Issued{}, l.failed("create", err)
	}
	r.digest = nil
	l.deps.Kit.Metrics.Issued.WithLabelValues(l.spec.Name, l.label(r)).Inc()
	return Issued{Row: r, Plaintext: plaintext, Extra: extra}, nil
}

// Record is a credential as lists and create answers show it: never a digest or a
// secret, and its verifications of the last 24 hours (SPEC §19).
type Record struct {
	*Row
	Usage24h usage.Totals
}

// List is the project's credentials that are not revoked, newest first, narrowed by
// where (badges: of one product).
func (l *Lifecycle) List(ctx context.Context, projectID string, where ...func(*sql.Selector)) ([]Record, error) {
	where = append(where, sql.FieldEQ(schema.FieldProjectID, projectID), sql.FieldIsNull("revoked_at"))
	rows, err := l.t.query(ctx, l.ent, 0, func(s *sql.Selector) { s.OrderBy(sql.Desc(s.C(schema.FieldID))) }, where...)
	if err != nil {
		return nil, l.failed("list", err)
	}
	out := make([]Record, len(rows))
	for i, r := range rows {
		r.digest, r.previous = nil, nil
		out[i] = Record{Row: r}
	}
	err = usage.Last24h(ctx, l.deps.Kit.UsageReader, l.deps.Kit.Clock.Now(), projectID, l.spec.Name, out,
		func(r *Record) string { return r.ID }, func(r *Record, t usage.Totals) { r.Usage24h = t })
	if err != nil {
		return nil, l.failed("list", err)
	}
	return out, nil
}

// Revoke revokes one of the project's live credentials on an admin's request.
func (l *Lifecycle) Revoke(ctx context.Context, projectID, id string, actor *string, origin audit.Origin) error {
	err := l.revoke(ctx, []func(*sql.Selector){sql.FieldEQ(schema.FieldID, id), sql.FieldEQ(schema.FieldProjectID, projectID)},
		actor, credential.Revocation{Origin: origin})
	switch {
	case errors.Is(err, errGone):
		return l.hooks.NotFound
	case err != nil && !known(err):
		return l.failed("revoke", err)
	}
	return err
}

// RevokePresented revokes the credential a presented secret belongs to — its current
// secret, or the one a roll replaced while its grace lasts (RFC 7009, a leak report) — as
// r says, with no actor. Anything else is credential.ErrNotLive.
func (l *Lifecycle) RevokePresented(ctx context.Context, token string, r credential.Revocation) error {
	if !l.wellFormed(token) {
		return credential.ErrNotLive
	}
	now := l.deps.Kit.Clock.Now()
	presented := schema.Presented[func(*sql.Selector)](l.spec.Table.Mixin.Lifecycle(), secret.DigestOf(token).Bytes(), now)
	return notLive(l.revoke(ctx, []func(*sql.Selector){presented, schema.Live[func(*sql.Selector)](now)}, nil, r))
}

// RevokeLive revokes the live credential with this id as r says (a badge whose product's
// own secret was presented); credential.ErrNotLive when it is not live.
func (l *Lifecycle) RevokeLive(ctx context.Context, id string, r credential.Revocation) error {
	live := schema.Live[func(*sql.Selector)](l.deps.Kit.Clock.Now())
	return notLive(l.revoke(ctx, []func(*sql.Selector){sql.FieldEQ(schema.FieldID, id), live}, nil, r))
}

func notLive(err error) error {
	if errors.Is(err, errGone) {
		return credential.ErrNotLive
	}
	return err
}

// orgOf is the org r's audit records carry (Hooks.Org), or nil.
func (l *Lifecycle) orgOf(r *Row) *string {
	if l.hooks.Org == nil {
		return nil
	}
	if org := l.hooks.Org(r); org != "" {
		return &org
	}
	return nil
}

// revoke revokes the one live credential matching where: the row, what the Revoked hook
// withdraws, the invalidation of every replica's caches (by digest and by id) and the
// audit record commit together.
func (l *Lifecycle) revoke(ctx context.Context, where []func(*sql.Selector), actor *string, rev credential.Revocation) error {
	var r *Row
	now := l.deps.Kit.Clock.Now()
	err := database.WithTx(ctx, l.ent, func(tx *ent.Tx) error {
		var err error
		r, err = l.t.one(ctx, tx, append(where, sql.FieldIsNull("revoked_at"))...)
		if errors.Is(err, errNoRow) {
			return errGone
		}
		if err != nil {
			return err
		}
		if err := l.revokeRow(ctx, tx, r, now); err != nil {
			return err
		}
		md := map[string]any{l.spec.idField(): r.ID}
		maps.Copy(md, rev.Metadata)
		action := rev.Action
		if action == "" {
			action = l.spec.action("revoke")
		}
		ev := audit.Event{ActorID: actor, ProjectID: r.ProjectID, OrgID: l.orgOf(r), Action: action, Metadata: md, Origin: rev.Origin}
		if actor == nil {
			ev.ActorID, ev.ActorType = rev.By(cmp.Or(l.spec.Holder, audit.ActorClient), r.ID)
		}
		_, err = l.deps.Audit.Record(ctx, tx, ev)
		return err
	})
	if err != nil {
		return err
	}
	l.deps.Kit.Metrics.Revoked.WithLabelValues(l.spec.Name, l.label(r)).Inc()
	return nil
}

// revokeRow revokes r, read live in tx: its row, what the Revoked hook withdraws and the
// invalidation of every replica's caches (by digest and by id); the caller records it.
func (l *Lifecycle) revokeRow(ctx context.Context, tx *ent.Tx, r *Row, now time.Time) error {
	n, err := l.t.update(ctx, tx, r.ID, map[string]any{"revoked_at": now})
	if err != nil {
		return err
	}
	if n == 0 {
		return errGone
	}
	if l.hooks.Revoked != nil {
		if err := l.hooks.Revoked(ctx, tx, r); err != nil {
			return err
		}
	}
	if err := l.verifier.Revoked(ctx, tx, r.digest, r.previous); err != nil {
		return err
	}
	return l.deps.Kit.Bus.Publish(ctx, tx, l.idTopic(), r.ID)
}

// Roll gives one of the project's live credentials a new secret (SPEC §12): same id and
// record; the secret it replaces keeps verifying until grace ends (never past the
// credential's own expiry), and one an earlier roll replaced stops now. The row, what the
// Rolled hook renews, the invalidations and the audit record commit together. may, when
// not nil, refuses a roll the project's policy no longer allows (it was read before the
// transaction: an in-memory store has one connection).
func (l *Lifecycle) Roll(ctx context.Context, projectID, id string, grace time.Duration, actor *string, origin audit.Origin,
	may func(r *Row, now time.Time) error) (Rolled, error) {
	now := l.deps.Kit.Clock.Now()
	var out Rolled
	err := database.WithTx(ctx, l.ent, func(tx *ent.Tx) error {
		r, err := l.t.one(ctx, tx, sql.FieldEQ(schema.FieldID, id), sql.FieldEQ(schema.FieldProjectID, projectID),
			schema.Live[func(*sql.Selector)](now))
		if errors.Is(err, errNoRow) {
			return l.hooks.RollNotFound
		}
		if err != nil {
			return err
		}
		if may != nil {
			if err := may(r, now); err != nil {
				return err
			}
		}
		plaintext, err := secret.NewToken(l.key(r))
		if err != nil {
			return err
		}
		replaced, earlier := r.digest, r.previous
		until, keep := rollover.Until(now, grace, r.ExpiresAt)
		set := map[string]any{"digest": secret.DigestOf(plaintext).Bytes(), l.spec.Table.Mixin.HintColumn(): secret.Hint(plaintext),
			"previous_digest": nil, "previous_expires_at": nil}
		var graceUntil *time.Time
		if keep {
			graceUntil = &until
			set["previous_digest"], set["previous_expires_at"] = replaced, until
		} else {
			until = now
		}
		if n, err := l.t.update(ctx, tx, r.ID, set); err != nil || n == 0 {
			if err == nil {
				err = l.hooks.RollNotFound
			}
			return err
		}
		r.Hint = secret.Hint(plaintext)
		// The secret just replaced must now stop at until, and an earlier one at once.
		if err := l.verifier.Revoked(ctx, tx, replaced, earlier); err != nil {
			return err
		}
		var extra any
		if l.hooks.Rolled != nil {
			if extra, err = l.hooks.Rolled(ctx, tx, r, graceUntil); err != nil {
				return err
			}
		}
		md := map[string]any{l.spec.idField(): r.ID}
		if l.hooks.RollMetadata != nil {
			maps.Copy(md, l.hooks.RollMetadata(r))
		}
		md["previousSecretExpiresAt"] = until.UTC()
		_, err = l.deps.Audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, OrgID: l.orgOf(r), Action: l.spec.action("roll"), Metadata: md,
			Origin: origin})
		r.digest, r.previous = nil, nil
		out = Rolled{Issued: Issued{Row: r, Plaintext: plaintext, Extra: extra}, PreviousSecretExpiresAt: until.UTC()}
		return err
	})
	if err != nil {
		if known(err) {
			return Rolled{}, err
		}
		return Rolled{}, l.failed("roll", err)
	}
	l.deps.Kit.Metrics.Issued.WithLabelValues(l.spec.Name, l.label(out.Row)).Inc()
	return out, nil
}
