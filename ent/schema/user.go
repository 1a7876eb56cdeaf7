package schema

// Owned by modules/account.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// User is a person who signs in, within one tenant (SPEC §2).
type User struct{ ent.Schema }

func (User) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: UserIDPrefix}, CreatedMixin{}}
}

func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").Immutable().NotEmpty(),
		// Stored lower-case, so uniqueness per tenant ignores case.
		field.String("email").NotEmpty(),
		// argon2id in PHC string form.
		field.String("password_hash").Sensitive(),
		// JSON text; session/me reads "name" from it and tolerates garbage.
		field.Text("metadata").Default("{}"),
		// Set when the user proved the address by a verification mail (SPEC §14).
		field.Bool("email_verified").Default(false),
		// Set while a project admin blocks the user (SPEC §25): every way in refuses them.
		field.Time("blocked_at").Optional().Nillable(),
		// Set while the person's org directory has them deactivated (SPEC §27): every way
		// in refuses them too. A column of its own, so that an admin's unblock never
		// undoes a directory's deactivation, nor a directory's reactivation an admin's block.
		field.Time("deprovisioned_at").Optional().Nillable(),
	}
}

func (User) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "email").Unique()}
}
