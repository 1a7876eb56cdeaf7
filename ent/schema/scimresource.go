package schema

// Owned by modules/scim.

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SCIMResource is a User or a Group a directory's IdP provisioned (RFC 7643): its
// attributes as the IdP sent them (normalised to the schemas' spelling), and the columns
// provisioning lookups use. A User is linked to a user of the project's tenant.
type SCIMResource struct{ ent.Schema }

func (SCIMResource) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: SCIMResourceIDPrefix}, CreatedMixin{}}
}

func (SCIMResource) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("directory_id").Immutable().NotEmpty(),
		field.Enum("resource_type").Values("User", "Group").Immutable(),
		// The userName (Users) or displayName (Groups), lower-cased: unique per directory
		// and type, since neither is case-exact (RFC 7643 §4.1.1).
		field.String("name_key").NotEmpty(),
		field.String("external_id").Optional().Nillable(),
		// The tenant's user a User is (Users only).
		field.String("user_id").Optional().Nillable().Immutable(),
		field.Bool("active").Default(true),
		// Whether the tenant user was deprovisioned for this resource (SPEC §27); kept apart
		// from active so a deprovisioning that failed is tried again on the next write.
		field.Bool("deprovisioned").Default(false),
		// The resource's attributes as JSON text, without id and meta.
		field.Text("attributes"),
		field.Int("version").Default(1),
		field.Time("updated_at").Default(func() time.Time { return time.Now().UTC() }),
	}
}

func (SCIMResource) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("directory_id", "resource_type", "name_key").Unique(),
		index.Fields("directory_id", "user_id").Unique(),
		index.Fields("directory_id", "resource_type", "external_id"),
	}
}
