// Package schema declares authcore's entities, one file each, headed by the module that
// owns the entity. A module queries only its own entities.
package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
	"github.com/oklog/ulid/v2"
)

// IDMixin gives an entity the prefixed, sortable, random id of SPEC §0 (prefix + ULID).
// ULIDs sort by creation time, so "newest first" paging can use the id as its cursor.
type IDMixin struct {
	mixin.Schema
	Prefix string
}

func (m IDMixin) Fields() []ent.Field {
	prefix := m.Prefix
	return []ent.Field{
		field.String("id").
			Immutable().
			NotEmpty().
			MaxLen(40).
			DefaultFunc(func() string { return NewID(prefix) }),
	}
}

// NewID returns prefix + a new ULID. ulid.Make draws from a process-wide monotonic source,
// so ids made in the same millisecond still sort in creation order.
func NewID(prefix string) string { return prefix + ulid.Make().String() }

// CreatedMixin records when a row was made. Times are stored in UTC.
type CreatedMixin struct{ mixin.Schema }

func (CreatedMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Immutable().Default(now),
	}
}

func now() time.Time { return time.Now().UTC() }
