package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"
)

// KindMixin is the table of a credential kind (SPEC §15): what platform/lifecycle keeps for
// every credential of every kind — its id, project, creator, creation and expiry, and the
// lifecycle's keys, grace, revocation, last use and hint — so that a kind declares only
// its own fields. A kind's table is not an ent entity: the kind declares it in its own
// folder (lifecycle.Declare), with this mixin, and the lifecycle owns it.
type KindMixin struct {
	mixin.Schema
	// IDPrefix begins every id (tok_, bdg_, dk_).
	IDPrefix string
	// Hint names the column of the secret's hint; "" for secret_hint.
	Hint string
	// ExpiresRequired: every credential expires (expires_at is NOT NULL).
	ExpiresRequired bool
}

// Columns of every kind's table, beyond its own fields and the lifecycle's.
const (
	FieldID         = "id"
	FieldProjectID  = "project_id"
	FieldCreatedBy  = "created_by"
	FieldCreatedAt  = "created_at"
	FieldExpiresAt  = "expires_at"
	FieldLastUsedAt = "last_used_at"
)

// HintColumn is the hint's column.
func (m KindMixin) HintColumn() string {
	if m.Hint == "" {
		return "secret_hint"
	}
	return m.Hint
}

// Lifecycle is the rollable, revocable part: the digest a secret is found by, the one a
// roll replaced and its grace end, revocation, last use and hint.
func (m KindMixin) Lifecycle() LifecycleMixin {
	return LifecycleMixin{LastUsed: true, Hint: m.HintColumn()}
}

func (m KindMixin) Fields() []ent.Field {
	expires := field.Time(FieldExpiresAt).Immutable()
	if !m.ExpiresRequired {
		expires = expires.Optional().Nillable()
	}
	fields := append(IDMixin{Prefix: m.IDPrefix}.Fields(), CreatedMixin{}.Fields()...)
	fields = append(fields,
		field.String(FieldProjectID).Immutable().NotEmpty(),
		field.String(FieldCreatedBy).Optional().Nillable().Immutable(),
		expires,
	)
	return append(fields, m.Lifecycle().Fields()...)
}

func (KindMixin) Indexes() []ent.Index {
	return []ent.Index{index.Fields(FieldProjectID, FieldID)}
}
