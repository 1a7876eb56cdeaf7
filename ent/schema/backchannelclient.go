package schema

// Owned by modules/approval.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// BackchannelClient is how a project's client takes the outcome of its backchannel
// authentication requests (OpenID CIBA, SPEC §23): by polling (every client may) or by a
// ping to its notification endpoint, signed as webhooks are (Standard Webhooks) with a
// secret sealed under the master key (AAD: the row id).
type BackchannelClient struct{ ent.Schema }

func (BackchannelClient) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: BackchannelClientIDPrefix}, CreatedMixin{}}
}

func (BackchannelClient) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.Enum("delivery_mode").Values("poll", "ping"),
		field.String("notification_endpoint").Default(""),
		field.String("secret_sealed").Default("").Sensitive(),
		field.Time("updated_at"),
	}
}

func (BackchannelClient) Indexes() []ent.Index {
	// A registration counts only for a client of its own project: client ids are unique,
	// but an admin could name another project's.
	return []ent.Index{index.Fields("project_id", "client_id").Unique()}
}
