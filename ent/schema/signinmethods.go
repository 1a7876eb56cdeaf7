package schema

// Owned by modules/federation.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// SignInMethods is a tenant's choice of sign-in methods (SPEC §20); its id is the tenant
// id. A tenant without a row has the defaults: password on, email link off, linking by
// proven email on.
type SignInMethods struct{ ent.Schema }

func (SignInMethods) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40),
		field.Bool("password").Default(true),
		field.Bool("email_link").Default(false),
		field.Bool("auto_link").Default(true),
		field.Time("updated_at").Default(now).UpdateDefault(now),
	}
}
