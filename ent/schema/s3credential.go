package schema

// Owned by plugins/s3.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// S3Credential is the SigV4 key pair of an s3 badge. SigV4 verification needs the secret
// key itself, so it is sealed (AES-256-GCM under the master key), never stored in clear.
type S3Credential struct{ ent.Schema }

func (S3Credential) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "s3c_"}, CreatedMixin{}, S3CredentialLifecycle}
}

func (S3Credential) Fields() []ent.Field {
	return []ent.Field{
		field.String("badge_id").Immutable().Unique().NotEmpty(),
		field.String("project_id").Immutable().NotEmpty(),
		field.String("secret_sealed").Sensitive(), // mutable to roll it and to re-seal it under a new master key
		// The secret of the key pair a roll replaced (its id is the lifecycle's previous key).
		// A roll issues a new access key id too: SigV4 clients (aws-sdk-go-v2's signer among
		// them) cache derived signing keys by access key id for a day, so a new secret under
		// the old id would keep being signed with the old one.
		field.String("previous_secret_sealed").Optional().Nillable().Sensitive(),
		field.String("bucket").Immutable(),
		field.String("role").Immutable(),
		field.Time("expires_at").Optional().Nillable().Immutable(),
	}
}
