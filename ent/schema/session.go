package schema

// Owned by modules/session.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Session is one signed-in session; its id is the session handle.
type Session struct{ ent.Schema }

func (Session) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "ses_"}, CreatedMixin{}}
}

func (Session) Fields() []ent.Field {
	return []ent.Field{
		field.String("user_id").Immutable().NotEmpty(),
		field.String("tenant_id").Immutable().NotEmpty(),
		// The custom part of the access token's claims.
		field.JSON("payload", map[string]any{}),
		field.String("user_agent").Optional().Nillable().Immutable(),
		field.String("ip_hash").Optional().Nillable().Immutable(),
		// Moved at each refresh, never on verification: no writes on the hot path.
		field.Time("last_active_at"),
		// When the refresh token stops working (sliding).
		field.Time("expires_at"),
		field.Time("revoked_at").Optional().Nillable(),
		// How the user authenticated (RFC 8176 values) and when last: the sign-in, or the
		// latest step-up (SPEC §17). Sessions from before MFA have neither; their
		// authentication time is their creation.
		field.Strings("amr").Optional(),
		field.Time("auth_time").Optional().Nillable(),
		// org_id is the session's active organisation (SPEC §26): its access tokens carry
		// it with the person's role there, read at each signing.
		field.String("org_id").Optional().Nillable(),
	}
}

func (Session) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id"),
		index.Fields("tenant_id", "created_at"),
		index.Fields("created_at"),
	}
}
