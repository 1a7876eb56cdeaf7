package schema

// Owned by platform/ratelimit.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SignInBudget is one token bucket of failed sign-ins (SPEC §9a): per account, or per
// device cookie. It lives in the store so every replica spends the same budget, and is
// spent by one conditional upsert, so parallel attempts cannot overdraw it. The id is a
// MAC of the account or device, never the email itself.
type SignInBudget struct{ ent.Schema }

func (SignInBudget) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(64),
		field.Float("tokens"),
		// updated_at is unix milliseconds: the bucket refills from it, in SQL both stores
		// evaluate alike.
		field.Int64("updated_at"),
	}
}

func (SignInBudget) Indexes() []ent.Index {
	return []ent.Index{index.Fields("updated_at")}
}
