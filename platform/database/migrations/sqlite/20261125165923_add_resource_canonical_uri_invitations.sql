-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_resources" table
CREATE TABLE `new_resources` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `uri` text NOT NULL, `canonical_uri` text NULL, `name` text NOT NULL, `scopes` json NOT NULL, `created_by` text NULL, PRIMARY KEY (`id`));
-- copy rows from old table "resources" to new temporary table "new_resources"
INSERT INTO `new_resources` (`id`, `created_at`, `project_id`, `uri`, `name`, `scopes`, `created_by`) SELECT `id`, `created_at`, `project_id`, `uri`, `name`, `scopes`, `created_by` FROM `resources`;
-- drop "resources" table after copying rows
DROP TABLE `resources`;
-- rename temporary table "new_resources" to "resources"
ALTER TABLE `new_resources` RENAME TO `resources`;
-- create index "resources_uri_key" to table: "resources"
CREATE UNIQUE INDEX `resources_uri_key` ON `resources` (`uri`);
-- create index "resources_canonical_uri_key" to table: "resources"
CREATE UNIQUE INDEX `resources_canonical_uri_key` ON `resources` (`canonical_uri`);
-- create index "resource_project_id_id" to table: "resources"
CREATE INDEX `resource_project_id_id` ON `resources` (`project_id`, `id`);
-- create "invitations" table
CREATE TABLE `invitations` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `email` text NOT NULL, `role` text NOT NULL, `digest` blob NOT NULL, `created_by` text NOT NULL, `expires_at` datetime NOT NULL, `accepted_at` datetime NULL, `accepted_by` text NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "invitations_digest_key" to table: "invitations"
CREATE UNIQUE INDEX `invitations_digest_key` ON `invitations` (`digest`);
-- create index "invitation_project_id_email" to table: "invitations"
CREATE INDEX `invitation_project_id_email` ON `invitations` (`project_id`, `email`);
-- create index "invitation_email_created_at" to table: "invitations"
CREATE INDEX `invitation_email_created_at` ON `invitations` (`email`, `created_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "invitation_email_created_at" to table: "invitations"
DROP INDEX `invitation_email_created_at`;
-- reverse: create index "invitation_project_id_email" to table: "invitations"
DROP INDEX `invitation_project_id_email`;
-- reverse: create index "invitations_digest_key" to table: "invitations"
DROP INDEX `invitations_digest_key`;
-- reverse: create "invitations" table
DROP TABLE `invitations`;
-- reverse: create index "resource_project_id_id" to table: "resources"
DROP INDEX `resource_project_id_id`;
-- reverse: create index "resources_canonical_uri_key" to table: "resources"
DROP INDEX `resources_canonical_uri_key`;
-- reverse: create index "resources_uri_key" to table: "resources"
DROP INDEX `resources_uri_key`;
-- reverse: create "new_resources" table
DROP TABLE `new_resources`;
