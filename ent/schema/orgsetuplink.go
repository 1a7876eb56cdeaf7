package schema

// Owned by modules/org.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrgSetupLink is a link a project admin sends an organisation's IT admin (SPEC §26): it
// opens once within minutes, and what it opens — a setup session of one org, for the
// intents it names — lasts an hour. Both secrets are kept as digests only.
type OrgSetupLink struct{ ent.Schema }

func (OrgSetupLink) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: OrgSetupLinkIDPrefix}, CreatedMixin{}}
}

func (OrgSetupLink) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("org_id").Immutable().NotEmpty(),
		field.JSON("intents", []string{}).Immutable(),
		field.Bytes("digest").Immutable().Unique().NotEmpty(),
		field.Time("expires_at").Immutable(),
		field.String("created_by").Optional().Nillable().Immutable(),
		field.Time("opened_at").Optional().Nillable(),
		// The setup session the link opened: its token's digest and end.
		field.Bytes("session_digest").Optional().Nillable().Unique(),
		field.Time("session_expires_at").Optional().Nillable(),
	}
}

func (OrgSetupLink) Indexes() []ent.Index {
	return []ent.Index{index.Fields("org_id"), index.Fields("expires_at")}
}
