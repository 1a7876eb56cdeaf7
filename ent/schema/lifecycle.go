package schema

import (
	"crypto/subtle"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
)

// LifecycleMixin is what every rollable, revocable credential stores (SPEC §12): the key a
// presented secret is found by (its digest; for s3 keys the access key id), the key a roll
// replaced and the end of its grace, and when it was revoked. Presented and Live are the
// one statement of "the current secret, or the replaced one until its grace ends, unless
// revoked or expired" that the owners query with.
type LifecycleMixin struct {
	mixin.Schema
	// Key and PreviousKey name the key columns: digest and previous_digest unless set.
	Key, PreviousKey string
	// StringKey: the keys are strings (an access key id), not digests.
	StringKey bool
	// LastUsed adds last_used_at.
	LastUsed bool
	// Hint names the column of the secret's hint (ac_ai_…abcd); "" for none.
	Hint string
}

func (m LifecycleMixin) keys() (string, string) {
	if m.Key == "" {
		return "digest", "previous_digest"
	}
	return m.Key, m.PreviousKey
}

func (m LifecycleMixin) Fields() []ent.Field {
	key, previous := m.keys()
	var fields []ent.Field
	if m.StringKey {
		fields = append(fields, field.String(key).Unique().NotEmpty(), field.String(previous).Optional().Nillable().Unique())
	} else {
		fields = append(fields, field.Bytes(key).Unique().NotEmpty(), field.Bytes(previous).Optional().Nillable().Unique())
	}
	fields = append(fields,
		field.Time("previous_expires_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
	)
	if m.LastUsed {
		fields = append(fields, field.Time("last_used_at").Optional().Nillable())
	}
	if m.Hint != "" {
		fields = append(fields, field.String(m.Hint))
	}
	return fields
}

// Presented matches the row whose current key is key, or whose replaced key is key and
// still in its grace at now. P is the entity's predicate type.
func Presented[P ~func(*sql.Selector)](m LifecycleMixin, key any, now time.Time) P {
	current, previous := m.keys()
	return P(sql.OrPredicates(
		sql.FieldEQ(current, key),
		sql.AndPredicates(sql.FieldEQ(previous, key), sql.FieldGT("previous_expires_at", now)),
	))
}

// Live matches rows not revoked and, when they expire, not expired at now.
func Live[P ~func(*sql.Selector)](now time.Time) P {
	return P(sql.AndPredicates(
		sql.FieldIsNull("revoked_at"),
		sql.OrPredicates(sql.FieldIsNull("expires_at"), sql.FieldGT("expires_at", now)),
	))
}

// LiveAt is Live for a row already read.
func LiveAt(now time.Time, revoked bool, expires *time.Time) bool {
	return !revoked && (expires == nil || now.Before(*expires))
}

// Matched is the key a presented one equals — the current key, or the key a roll replaced
// — and until when it works: the credential's own expiry (nil: never) for the current
// key, the earlier of that and the grace's end for the replaced one (SPEC §12). key is
// nil when presented is neither, or is a replaced key with no grace end. Compared in
// constant time.
func Matched(presented, current, previous []byte, expires, graceEnd *time.Time) (key []byte, until *time.Time) {
	switch {
	case previous != nil && subtle.ConstantTimeCompare(previous, presented) == 1:
		if graceEnd == nil {
			return nil, nil // a replaced key without a grace end never works
		}
		if expires == nil || graceEnd.Before(*expires) {
			return previous, graceEnd
		}
		return previous, expires
	case subtle.ConstantTimeCompare(current, presented) == 1:
		return current, expires
	}
	return nil, nil
}

// The lifecycle of each credential entity, shared by its schema and its owner's queries.
var (
	AuthClientLifecycle   = LifecycleMixin{Key: "secret_digest", PreviousKey: "previous_secret_digest"}
	S3CredentialLifecycle = LifecycleMixin{Key: "access_key_id", PreviousKey: "previous_access_key_id", StringKey: true}
)
