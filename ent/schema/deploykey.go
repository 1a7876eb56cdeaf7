package schema

// Owned by internal/template/deploykey, the template of a credential kind: copy this file
// with it and rename both (docs/extending.md).

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// DeployKey is a deploy key a project admin mints for a CI system. What every credential
// has comes from its KindMixin; only the fields below are its own.
type DeployKey struct{ ent.Schema }

// DeployKeyKind is its table's share of every kind's; the module hands the same value to
// the lifecycle.
var DeployKeyKind = KindMixin{IDPrefix: "dk_"}

func (DeployKey) Mixin() []ent.Mixin { return []ent.Mixin{DeployKeyKind} }

func (DeployKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").Immutable().NotEmpty().MaxLen(80),
		field.String("repository").Optional().Nillable().Immutable().MaxLen(200),
	}
}
