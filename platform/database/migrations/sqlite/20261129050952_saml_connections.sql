-- +goose Up
-- create "saml_connections" table
CREATE TABLE `saml_connections` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `org_id` text NOT NULL, `name` text NOT NULL, `enabled` bool NOT NULL DEFAULT (true), `metadata_url` text NOT NULL DEFAULT (''), `idp_metadata` text NOT NULL, `idp_entity_id` text NOT NULL, `metadata_read_at` datetime NOT NULL, `metadata_refresh_at` datetime NULL, `attribute_mapping` json NOT NULL, `allow_idp_initiated` bool NOT NULL DEFAULT (false), `group_roles` json NOT NULL, `sp_key_sealed` text NOT NULL, `sp_certificate` text NOT NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "samlconnection_tenant_id_org_id" to table: "saml_connections"
CREATE INDEX `samlconnection_tenant_id_org_id` ON `saml_connections` (`tenant_id`, `org_id`);
-- create index "samlconnection_metadata_refresh_at" to table: "saml_connections"
CREATE INDEX `samlconnection_metadata_refresh_at` ON `saml_connections` (`metadata_refresh_at`);

-- +goose Down
-- reverse: create index "samlconnection_metadata_refresh_at" to table: "saml_connections"
DROP INDEX `samlconnection_metadata_refresh_at`;
-- reverse: create index "samlconnection_tenant_id_org_id" to table: "saml_connections"
DROP INDEX `samlconnection_tenant_id_org_id`;
-- reverse: create "saml_connections" table
DROP TABLE `saml_connections`;
