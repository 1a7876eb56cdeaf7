package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DeviceAuthorization is a device authorization request (RFC 8628, SPEC §25): a CLI or a
// TV shows the person a user code, the person approves on the console, and the device
// polls for its tokens with the device code. Both codes are kept as digests only. It
// lives ten minutes and issues once.
type DeviceAuthorization struct{ ent.Schema }

func (DeviceAuthorization) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: DeviceAuthorizationIDPrefix}, CreatedMixin{}}
}

func (DeviceAuthorization) Fields() []ent.Field {
	return []ent.Field{
		field.Bytes("device_code_digest").Immutable().Unique(),
		field.Bytes("user_code_digest").Immutable().Unique(),
		field.String("client_id").Immutable().NotEmpty(),
		field.String("client_name").Immutable(),
		field.JSON("scopes", []string{}).Immutable(),
		field.JSON("resources", []string{}).Immutable(),
		// project_id is the app's project or the project of the resources; "" when
		// neither names one. tenant_id is whose user answers: an app's project, "" for
		// dashboard users.
		field.String("project_id").Immutable(),
		field.String("tenant_id").Immutable(),
		field.Time("expires_at").Immutable(),
		// interval is the polling interval in seconds; slow_down adds 5 (RFC 8628 §3.5).
		field.Int("interval"),
		field.Time("last_polled_at").Optional().Nillable(),
		field.Enum("status").Values("pending", "approved", "denied", "issued").Default("pending"),
		// What an approval decided: the grant, and how the person had signed in.
		field.String("grant_id").Optional().Nillable(),
		field.String("user_id").Optional().Nillable(),
		field.String("sid").Optional(),
		field.Time("auth_time").Optional().Nillable(),
		field.Strings("amr").Optional(),
	}
}

func (DeviceAuthorization) Indexes() []ent.Index {
	return []ent.Index{index.Fields("expires_at")}
}
