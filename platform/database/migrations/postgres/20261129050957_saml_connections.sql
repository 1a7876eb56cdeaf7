-- +goose Up
-- create "saml_connections" table
CREATE TABLE "saml_connections" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "tenant_id" character varying NOT NULL, "org_id" character varying NOT NULL, "name" character varying NOT NULL, "enabled" boolean NOT NULL DEFAULT true, "metadata_url" character varying NOT NULL DEFAULT '', "idp_metadata" text NOT NULL, "idp_entity_id" character varying NOT NULL, "metadata_read_at" timestamptz NOT NULL, "metadata_refresh_at" timestamptz NULL, "attribute_mapping" jsonb NOT NULL, "allow_idp_initiated" boolean NOT NULL DEFAULT false, "group_roles" jsonb NOT NULL, "sp_key_sealed" character varying NOT NULL, "sp_certificate" text NOT NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "samlconnection_metadata_refresh_at" to table: "saml_connections"
CREATE INDEX "samlconnection_metadata_refresh_at" ON "saml_connections" ("metadata_refresh_at");
-- create index "samlconnection_tenant_id_org_id" to table: "saml_connections"
CREATE INDEX "samlconnection_tenant_id_org_id" ON "saml_connections" ("tenant_id", "org_id");

-- +goose Down
-- reverse: create index "samlconnection_tenant_id_org_id" to table: "saml_connections"
DROP INDEX "samlconnection_tenant_id_org_id";
-- reverse: create index "samlconnection_metadata_refresh_at" to table: "saml_connections"
DROP INDEX "samlconnection_metadata_refresh_at";
-- reverse: create "saml_connections" table
DROP TABLE "saml_connections";
