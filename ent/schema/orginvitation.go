package schema

// Owned by modules/org.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrgInvitation asks someone, by email, to join an org of a project with a role (SPEC
// §26): a single-use link (ac_oinv_…, 7 days) mailed to the address, accepted by the user
// of the project's tenant who holds that address, verified. Only its digest is stored.
// Accepting, revoking or expiring ends it; it is live while none has happened. Not the
// project invitations' entity: those make dashboard users members of a project.
type OrgInvitation struct{ ent.Schema }

func (OrgInvitation) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "oinv_"}, CreatedMixin{}}
}

func (OrgInvitation) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("org_id").Immutable().NotEmpty(),
		// email is lower-cased, as accounts' are.
		field.String("email").Immutable().NotEmpty(),
		field.String("role").Immutable().NotEmpty(),
		field.Bytes("digest").Immutable().Unique().Sensitive(),
		// created_by is the inviting user, a project admin (dashboard) or an org admin (tenant).
		field.String("created_by").Immutable().NotEmpty(),
		field.Time("expires_at").Immutable(),
		field.Time("accepted_at").Optional().Nillable(),
		field.String("accepted_by").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

func (OrgInvitation) Indexes() []ent.Index {
	return []ent.Index{
		// The list and the one-pending-per-address check read an org's invitations.
		index.Fields("org_id", "email"),
		// The mail budgets count a project's, and an address's, recent invitations.
		index.Fields("project_id", "created_at"),
		index.Fields("email", "created_at"),
	}
}
