-- +goose Up
-- create "scim_directories" table
CREATE TABLE "scim_directories" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "org_id" character varying NOT NULL, "name" character varying NOT NULL, "digest" bytea NOT NULL, "hint" character varying NOT NULL, "token_revoked_at" timestamptz NULL, "group_roles" jsonb NOT NULL, "last_sync_at" timestamptz NULL, "created_by" character varying NULL, PRIMARY KEY ("id"));
-- create index "scim_directories_digest_key" to table: "scim_directories"
CREATE UNIQUE INDEX "scim_directories_digest_key" ON "scim_directories" ("digest");
-- create index "scimdirectory_project_id_org_id" to table: "scim_directories"
CREATE INDEX "scimdirectory_project_id_org_id" ON "scim_directories" ("project_id", "org_id");
-- create "scim_resources" table
CREATE TABLE "scim_resources" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "directory_id" character varying NOT NULL, "resource_type" character varying NOT NULL, "name_key" character varying NOT NULL, "external_id" character varying NULL, "user_id" character varying NULL, "active" boolean NOT NULL DEFAULT true, "deprovisioned" boolean NOT NULL DEFAULT false, "attributes" text NOT NULL, "version" bigint NOT NULL DEFAULT 1, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "scimresource_directory_id_resource_type_external_id" to table: "scim_resources"
CREATE INDEX "scimresource_directory_id_resource_type_external_id" ON "scim_resources" ("directory_id", "resource_type", "external_id");
-- create index "scimresource_directory_id_resource_type_name_key" to table: "scim_resources"
CREATE UNIQUE INDEX "scimresource_directory_id_resource_type_name_key" ON "scim_resources" ("directory_id", "resource_type", "name_key");
-- create index "scimresource_directory_id_user_id" to table: "scim_resources"
CREATE UNIQUE INDEX "scimresource_directory_id_user_id" ON "scim_resources" ("directory_id", "user_id");

-- +goose Down
-- reverse: create index "scimresource_directory_id_user_id" to table: "scim_resources"
DROP INDEX "scimresource_directory_id_user_id";
-- reverse: create index "scimresource_directory_id_resource_type_name_key" to table: "scim_resources"
DROP INDEX "scimresource_directory_id_resource_type_name_key";
-- reverse: create index "scimresource_directory_id_resource_type_external_id" to table: "scim_resources"
DROP INDEX "scimresource_directory_id_resource_type_external_id";
-- reverse: create "scim_resources" table
DROP TABLE "scim_resources";
-- reverse: create index "scimdirectory_project_id_org_id" to table: "scim_directories"
DROP INDEX "scimdirectory_project_id_org_id";
-- reverse: create index "scim_directories_digest_key" to table: "scim_directories"
DROP INDEX "scim_directories_digest_key";
-- reverse: create "scim_directories" table
DROP TABLE "scim_directories";
