-- +goose Up
-- create "scim_directories" table
CREATE TABLE `scim_directories` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `org_id` text NOT NULL, `name` text NOT NULL, `digest` blob NOT NULL, `hint` text NOT NULL, `token_revoked_at` datetime NULL, `group_roles` json NOT NULL, `last_sync_at` datetime NULL, `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "scim_directories_digest_key" to table: "scim_directories"
CREATE UNIQUE INDEX `scim_directories_digest_key` ON `scim_directories` (`digest`);
-- create index "scimdirectory_project_id_org_id" to table: "scim_directories"
CREATE INDEX `scimdirectory_project_id_org_id` ON `scim_directories` (`project_id`, `org_id`);
-- create "scim_resources" table
CREATE TABLE `scim_resources` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `directory_id` text NOT NULL, `resource_type` text NOT NULL, `name_key` text NOT NULL, `external_id` text NULL, `user_id` text NULL, `active` bool NOT NULL DEFAULT (true), `deprovisioned` bool NOT NULL DEFAULT (false), `attributes` text NOT NULL, `version` integer NOT NULL DEFAULT (1), `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "scimresource_directory_id_resource_type_name_key" to table: "scim_resources"
CREATE UNIQUE INDEX `scimresource_directory_id_resource_type_name_key` ON `scim_resources` (`directory_id`, `resource_type`, `name_key`);
-- create index "scimresource_directory_id_user_id" to table: "scim_resources"
CREATE UNIQUE INDEX `scimresource_directory_id_user_id` ON `scim_resources` (`directory_id`, `user_id`);
-- create index "scimresource_directory_id_resource_type_external_id" to table: "scim_resources"
CREATE INDEX `scimresource_directory_id_resource_type_external_id` ON `scim_resources` (`directory_id`, `resource_type`, `external_id`);

-- +goose Down
-- reverse: create index "scimresource_directory_id_resource_type_external_id" to table: "scim_resources"
DROP INDEX `scimresource_directory_id_resource_type_external_id`;
-- reverse: create index "scimresource_directory_id_user_id" to table: "scim_resources"
DROP INDEX `scimresource_directory_id_user_id`;
-- reverse: create index "scimresource_directory_id_resource_type_name_key" to table: "scim_resources"
DROP INDEX `scimresource_directory_id_resource_type_name_key`;
-- reverse: create "scim_resources" table
DROP TABLE `scim_resources`;
-- reverse: create index "scimdirectory_project_id_org_id" to table: "scim_directories"
DROP INDEX `scimdirectory_project_id_org_id`;
-- reverse: create index "scim_directories_digest_key" to table: "scim_directories"
DROP INDEX `scim_directories_digest_key`;
-- reverse: create "scim_directories" table
DROP TABLE `scim_directories`;
