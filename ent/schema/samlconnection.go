package schema

// Owned by modules/federation.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SAMLConnection is an org's SAML 2.0 identity provider (SPEC §27): the IdP's metadata as
// last read (from its URL, refreshed, or as uploaded), how its attributes map, and the
// connection's own SP key pair. A table of its own rather than columns of
// SignInProvider: the two share a name, an org and a switch, and nothing else (no client,
// no issuer, no scopes; a key pair and an XML document instead), so one table would be
// mostly empty columns whose meaning depends on a type.
type SAMLConnection struct{ ent.Schema }

func (SAMLConnection) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: SAMLConnectionIDPrefix}, CreatedMixin{}}
}

func (SAMLConnection) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").Immutable().NotEmpty(),
		field.String("org_id").Immutable().NotEmpty(),
		field.String("name").NotEmpty(),
		field.Bool("enabled").Default(true),
		// metadata_url is where the IdP publishes its metadata, "" for an uploaded document.
		field.String("metadata_url").Default(""),
		// idp_metadata is the IdP's EntityDescriptor as last read and accepted: every
		// signing certificate in it is trusted, so a rollover's two both work.
		field.Text("idp_metadata"),
		field.String("idp_entity_id").NotEmpty(),
		field.Time("metadata_read_at"),
		// metadata_refresh_at is when a URL's metadata is read again (its validUntil or
		// cacheDuration, at most a day).
		field.Time("metadata_refresh_at").Optional().Nillable(),
		field.JSON("attribute_mapping", map[string]string{}),
		field.Bool("allow_idp_initiated").Default(false),
		field.JSON("group_roles", map[string]string{}),
		// sp_key_sealed is the connection's RSA key (PKCS #8), sealed to the row's id: it
		// signs AuthnRequests and decrypts encrypted assertions, and is never returned.
		field.String("sp_key_sealed").Sensitive(),
		// sp_certificate is its self-signed certificate (DER, base64), published in the SP
		// metadata.
		field.Text("sp_certificate"),
		field.Time("updated_at").Default(now).UpdateDefault(now),
	}
}

func (SAMLConnection) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "org_id"), index.Fields("metadata_refresh_at")}
}
