package schema

// Owned by modules/approval.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// BackchannelRequest is an agent's request for a person's approval (OpenID CIBA with RFC
// 9396 authorization details, SPEC §23). The client polls with its auth_req_id, kept as a
// digest; the details are kept as the client sent them (compact JSON) with the digest of
// the schema each type had, and details_digest binds both: what the person approves is
// that digest, and a token is issued only while every type still has that schema. What a
// ping carries (the client notification token and the auth_req_id) is sealed (AAD: the
// row id).
type BackchannelRequest struct{ ent.Schema }

func (BackchannelRequest) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: BackchannelRequestIDPrefix}, CreatedMixin{}}
}

func (BackchannelRequest) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.String("client_name").Immutable().Default(""),
		field.String("user_id").Immutable().NotEmpty(),
		field.Bytes("req_digest").Immutable().Sensitive(),
		field.JSON("scopes", []string{}).Immutable(),
		field.JSON("audience", []string{}).Immutable(),
		field.String("binding_message").Immutable().Default(""),
		field.Text("authorization_details").Immutable(),
		field.JSON("type_digests", map[string]string{}).Immutable(),
		field.String("details_digest").Immutable(),
		field.Enum("status").Values("pending", "approved", "denied", "issued"),
		// interval is the least time between polls, in seconds; a poll sooner grows it
		// by 5 (CIBA §11: slow_down).
		field.Int("interval"),
		field.Time("expires_at").Immutable(),
		field.Time("last_polled_at").Optional().Nillable(),
		field.Time("decided_at").Optional().Nillable(),
		// auth_time is when the approving person last authenticated (the id_token's).
		field.Time("auth_time").Optional().Nillable(),
		field.Enum("delivery_mode").Values("poll", "ping").Immutable(),
		field.String("ping_sealed").Default("").Sensitive(),
		// A ping is due at ping_next_at; a sender holds it until ping_locked_until.
		field.Time("ping_next_at").Optional().Nillable(),
		field.Time("ping_locked_until").Optional().Nillable(),
		field.Int("ping_attempts").Default(0),
		field.Time("ping_delivered_at").Optional().Nillable(),
		field.String("ping_last_error").Default(""),
	}
}

func (BackchannelRequest) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("req_digest").Unique(),
		index.Fields("user_id", "status"),
		index.Fields("client_id", "user_id", "status"),
		index.Fields("ping_next_at"),
		index.Fields("expires_at"),
	}
}
