package schema

// Owned by modules/project.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Invitation asks someone, by email, to join a project (SPEC §9b, N19): a single-use link
// (ac_inv_…, 7 days) mailed to the address, accepted by the dashboard user with that
// address once it is verified. Only its digest is stored. Accepting, revoking or expiring
// ends it; it is live while none has happened.
type Invitation struct{ ent.Schema }

func (Invitation) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "inv_"}, CreatedMixin{}}
}

func (Invitation) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		// email is lower-cased, as accounts' are.
		field.String("email").Immutable().NotEmpty(),
		field.Enum("role").Values("viewer", "developer", "admin").Immutable(),
		field.Bytes("digest").Immutable().Unique().Sensitive(),
		field.String("created_by").Immutable().NotEmpty(),
		field.Time("expires_at").Immutable(),
		field.Time("accepted_at").Optional().Nillable(),
		field.String("accepted_by").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

func (Invitation) Indexes() []ent.Index {
	return []ent.Index{
		// The list and the one-pending-per-address check read a project's invitations.
		index.Fields("project_id", "email"),
		// The mail budget counts an address's recent invitations.
		index.Fields("email", "created_at"),
	}
}
