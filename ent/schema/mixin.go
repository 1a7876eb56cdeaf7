// Package schema declares authcore's entities, one file each, headed by the module that
// owns the entity. A module queries only its own entities.
package schema

import (
	"crypto/rand"
	"sync"
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

// NewID returns prefix + a new ULID whose random part comes from crypto/rand (ulid.Make's
// default source is math/rand seeded by the time, which an attacker can guess). The
// source is monotonic, so ids made in the same millisecond still sort in creation order;
// within a millisecond it steps by a random amount, not by one.
func NewID(prefix string) string {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return prefix + ulid.MustNew(ulid.Now(), entropy).String()
}

var (
	// entropyMu guards entropy: a monotonic source is not safe for concurrent use.
	entropyMu sync.Mutex
	entropy   = ulid.Monotonic(rand.Reader, 0)
)

// CreatedMixin records when a row was made. Times are stored in UTC.
type CreatedMixin struct{ mixin.Schema }

func (CreatedMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Immutable().Default(now),
	}
}

func now() time.Time { return time.Now().UTC() }
