-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- add column "keys" to table: "auth_clients"
ALTER TABLE `auth_clients` ADD COLUMN `keys` json NULL;
-- add column "scopes" to table: "auth_clients"
ALTER TABLE `auth_clients` ADD COLUMN `scopes` json NULL;
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
-- add column "successor" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `successor` text NULL;
-- add column "auth_time" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `auth_time` datetime NULL;
-- add column "amr" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `amr` json NULL;
-- add column "sid" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `sid` text NULL;
-- add column "client_uri" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `client_uri` text NULL;
-- add column "browser" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `browser` blob NULL;
-- add column "session_handle" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `session_handle` text NULL;
-- add column "nonce" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `nonce` text NULL;
-- add column "prompt" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `prompt` text NULL;
-- add column "max_age" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `max_age` integer NULL;
-- create "new_oauth_clients" table
CREATE TABLE `new_oauth_clients` (`id` text NOT NULL, `created_at` datetime NOT NULL, `name` text NOT NULL, `redirect_uris` json NOT NULL, `application_type` text NOT NULL, `grant_types` json NOT NULL, `client_uri` text NULL, `last_used_at` datetime NULL, `token_endpoint_auth_method` text NOT NULL DEFAULT ('none'), `secret_digest` blob NULL, `jwks` json NULL, `jwks_uri` text NULL, `post_logout_redirect_uris` json NULL, `scope` text NULL, `id_token_signed_response_alg` text NULL, PRIMARY KEY (`id`));
-- copy rows from old table "oauth_clients" to new temporary table "new_oauth_clients"
INSERT INTO `new_oauth_clients` (`id`, `created_at`, `name`, `redirect_uris`, `application_type`, `grant_types`, `client_uri`) SELECT `id`, `created_at`, `name`, `redirect_uris`, `application_type`, `grant_types`, `client_uri` FROM `oauth_clients`;
-- drop "oauth_clients" table after copying rows
DROP TABLE `oauth_clients`;
-- rename temporary table "new_oauth_clients" to "oauth_clients"
ALTER TABLE `new_oauth_clients` RENAME TO `oauth_clients`;
-- add column "nonce" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `nonce` text NULL;
-- add column "auth_time" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `auth_time` datetime NULL;
-- add column "amr" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `amr` json NULL;
-- add column "sid" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `sid` text NULL;
-- create "invitations" table
CREATE TABLE `invitations` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `email` text NOT NULL, `role` text NOT NULL, `digest` blob NOT NULL, `created_by` text NOT NULL, `expires_at` datetime NOT NULL, `accepted_at` datetime NULL, `accepted_by` text NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "invitations_digest_key" to table: "invitations"
CREATE UNIQUE INDEX `invitations_digest_key` ON `invitations` (`digest`);
-- create index "invitation_project_id_email" to table: "invitations"
CREATE INDEX `invitation_project_id_email` ON `invitations` (`project_id`, `email`);
-- create index "invitation_email_created_at" to table: "invitations"
CREATE INDEX `invitation_email_created_at` ON `invitations` (`email`, `created_at`);
-- create "used_assertions" table
CREATE TABLE `used_assertions` (`id` text NOT NULL, `created_at` datetime NOT NULL, `issuer` text NOT NULL, `jti` text NOT NULL, `expires_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "usedassertion_issuer_jti" to table: "used_assertions"
CREATE UNIQUE INDEX `usedassertion_issuer_jti` ON `used_assertions` (`issuer`, `jti`);
-- create index "usedassertion_expires_at" to table: "used_assertions"
CREATE INDEX `usedassertion_expires_at` ON `used_assertions` (`expires_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "usedassertion_expires_at" to table: "used_assertions"
DROP INDEX `usedassertion_expires_at`;
-- reverse: create index "usedassertion_issuer_jti" to table: "used_assertions"
DROP INDEX `usedassertion_issuer_jti`;
-- reverse: create "used_assertions" table
DROP TABLE `used_assertions`;
-- reverse: create index "invitation_email_created_at" to table: "invitations"
DROP INDEX `invitation_email_created_at`;
-- reverse: create index "invitation_project_id_email" to table: "invitations"
DROP INDEX `invitation_project_id_email`;
-- reverse: create index "invitations_digest_key" to table: "invitations"
DROP INDEX `invitations_digest_key`;
-- reverse: create "invitations" table
DROP TABLE `invitations`;
-- reverse: add column "sid" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `sid`;
-- reverse: add column "amr" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `amr`;
-- reverse: add column "auth_time" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `auth_time`;
-- reverse: add column "nonce" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `nonce`;
-- reverse: create "new_oauth_clients" table
DROP TABLE `new_oauth_clients`;
-- reverse: add column "max_age" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `max_age`;
-- reverse: add column "prompt" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `prompt`;
-- reverse: add column "nonce" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `nonce`;
-- reverse: add column "session_handle" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `session_handle`;
-- reverse: add column "browser" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `browser`;
-- reverse: add column "client_uri" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `client_uri`;
-- reverse: add column "sid" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `sid`;
-- reverse: add column "amr" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `amr`;
-- reverse: add column "auth_time" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `auth_time`;
-- reverse: add column "successor" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `successor`;
-- reverse: create index "resource_project_id_id" to table: "resources"
DROP INDEX `resource_project_id_id`;
-- reverse: create index "resources_canonical_uri_key" to table: "resources"
DROP INDEX `resources_canonical_uri_key`;
-- reverse: create index "resources_uri_key" to table: "resources"
DROP INDEX `resources_uri_key`;
-- reverse: create "new_resources" table
DROP TABLE `new_resources`;
-- reverse: add column "scopes" to table: "auth_clients"
ALTER TABLE `auth_clients` DROP COLUMN `scopes`;
-- reverse: add column "keys" to table: "auth_clients"
ALTER TABLE `auth_clients` DROP COLUMN `keys`;
