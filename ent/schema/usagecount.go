package schema

// Owned by modules/usage.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// UsageCount is how often a credential was verified with one outcome in one minute (or,
// after 30 days, one day): SPEC §19. Rows are added to by batches, never per request.
// credential_id is "" for verifications of no known credential of the project.
type UsageCount struct{ ent.Schema }

func (UsageCount) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable(),
		field.String("kind").Immutable(),
		field.String("credential_id").Immutable(),
		// resolution is "minute" or "day": the length of the bucket starting at bucket.
		field.String("resolution").Immutable(),
		field.Time("bucket").Immutable(),
		field.String("outcome").Immutable(),
		field.Int64("count"),
	}
}

func (UsageCount) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("project_id", "kind", "credential_id", "resolution", "bucket", "outcome").Unique(),
		index.Fields("project_id", "resolution", "bucket"),
	}
}
