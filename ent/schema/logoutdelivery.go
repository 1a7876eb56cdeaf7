package schema

// Owned by modules/logout.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// LogoutDelivery is one back-channel logout token owed to an app (OIDC Back-Channel
// Logout 1.0, SPEC §25): queued in the transaction that ended the session, sent by one
// replica at a time, retried with backoff, kept a while for the app's admins to see.
type LogoutDelivery struct{ ent.Schema }

func (LogoutDelivery) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: LogoutDeliveryIDPrefix}, CreatedMixin{}}
}

func (LogoutDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("sid").Immutable().NotEmpty(),
		field.String("user_id").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.String("project_id").Immutable().NotEmpty(),
		// url is the app's back-channel logout URI when the session ended.
		field.String("url").Immutable().NotEmpty(),
		field.Enum("status").Values("pending", "delivered", "failed").Default("pending"),
		field.Int("attempts").Default(0),
		field.Time("next_attempt_at"),
		field.Time("locked_until").Optional().Nillable(),
		field.Time("last_attempt_at").Optional().Nillable(),
		field.Int("last_status_code").Optional().Nillable(),
		field.String("last_error").Optional().Nillable(),
		field.Time("delivered_at").Optional().Nillable(),
	}
}

func (LogoutDelivery) Indexes() []ent.Index {
	return []ent.Index{index.Fields("status", "next_attempt_at"), index.Fields("client_id", "id"), index.Fields("created_at")}
}
