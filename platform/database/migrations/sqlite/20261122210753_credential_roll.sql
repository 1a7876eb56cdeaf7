-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_agent_tokens" table
CREATE TABLE `new_agent_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `agent_name` text NOT NULL, `scopes` json NOT NULL, `created_by` text NULL, `expires_at` datetime NOT NULL, `last_used_at` datetime NULL, `token_hint` text NOT NULL, `digest` blob NOT NULL, `previous_digest` blob NULL, `previous_expires_at` datetime NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- copy rows from old table "agent_tokens" to new temporary table "new_agent_tokens"
INSERT INTO `new_agent_tokens` (`id`, `created_at`, `project_id`, `agent_name`, `scopes`, `created_by`, `expires_at`, `last_used_at`, `token_hint`, `digest`, `revoked_at`) SELECT `id`, `created_at`, `project_id`, `agent_name`, `scopes`, `created_by`, `expires_at`, `last_used_at`, `token_hint`, `digest`, `revoked_at` FROM `agent_tokens`;
-- drop "agent_tokens" table after copying rows
DROP TABLE `agent_tokens`;
-- rename temporary table "new_agent_tokens" to "agent_tokens"
ALTER TABLE `new_agent_tokens` RENAME TO `agent_tokens`;
-- create index "agent_tokens_digest_key" to table: "agent_tokens"
CREATE UNIQUE INDEX `agent_tokens_digest_key` ON `agent_tokens` (`digest`);
-- create index "agent_tokens_previous_digest_key" to table: "agent_tokens"
CREATE UNIQUE INDEX `agent_tokens_previous_digest_key` ON `agent_tokens` (`previous_digest`);
-- create index "agenttoken_project_id_id" to table: "agent_tokens"
CREATE INDEX `agenttoken_project_id_id` ON `agent_tokens` (`project_id`, `id`);
-- create "new_badges" table
CREATE TABLE `new_badges` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `product` text NOT NULL, `name` text NOT NULL, `role` text NOT NULL, `created_by` text NULL, `expires_at` datetime NULL, `last_used_at` datetime NULL, `secret_hint` text NOT NULL, `digest` blob NOT NULL, `previous_digest` blob NULL, `previous_expires_at` datetime NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- copy rows from old table "badges" to new temporary table "new_badges"
INSERT INTO `new_badges` (`id`, `created_at`, `project_id`, `product`, `name`, `role`, `created_by`, `expires_at`, `last_used_at`, `secret_hint`, `digest`, `revoked_at`) SELECT `id`, `created_at`, `project_id`, `product`, `name`, `role`, `created_by`, `expires_at`, `last_used_at`, `secret_hint`, `digest`, `revoked_at` FROM `badges`;
-- drop "badges" table after copying rows
DROP TABLE `badges`;
-- rename temporary table "new_badges" to "badges"
ALTER TABLE `new_badges` RENAME TO `badges`;
-- create index "badges_digest_key" to table: "badges"
CREATE UNIQUE INDEX `badges_digest_key` ON `badges` (`digest`);
-- create index "badges_previous_digest_key" to table: "badges"
CREATE UNIQUE INDEX `badges_previous_digest_key` ON `badges` (`previous_digest`);
-- create index "badge_project_id_id" to table: "badges"
CREATE INDEX `badge_project_id_id` ON `badges` (`project_id`, `id`);
-- create "new_auth_clients" table
CREATE TABLE `new_auth_clients` (`id` text NOT NULL, `created_at` datetime NOT NULL, `badge_id` text NOT NULL, `project_id` text NOT NULL, `secret_digest` blob NOT NULL, `previous_secret_digest` blob NULL, `previous_expires_at` datetime NULL, `role` text NOT NULL, `expires_at` datetime NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- copy rows from old table "auth_clients" to new temporary table "new_auth_clients"
INSERT INTO `new_auth_clients` (`id`, `created_at`, `badge_id`, `project_id`, `secret_digest`, `role`, `expires_at`, `revoked_at`) SELECT `id`, `created_at`, `badge_id`, `project_id`, `secret_digest`, `role`, `expires_at`, `revoked_at` FROM `auth_clients`;
-- drop "auth_clients" table after copying rows
DROP TABLE `auth_clients`;
-- rename temporary table "new_auth_clients" to "auth_clients"
ALTER TABLE `new_auth_clients` RENAME TO `auth_clients`;
-- create index "auth_clients_badge_id_key" to table: "auth_clients"
CREATE UNIQUE INDEX `auth_clients_badge_id_key` ON `auth_clients` (`badge_id`);
-- create index "auth_clients_secret_digest_key" to table: "auth_clients"
CREATE UNIQUE INDEX `auth_clients_secret_digest_key` ON `auth_clients` (`secret_digest`);
-- create index "auth_clients_previous_secret_digest_key" to table: "auth_clients"
CREATE UNIQUE INDEX `auth_clients_previous_secret_digest_key` ON `auth_clients` (`previous_secret_digest`);
-- create "new_s3credentials" table
CREATE TABLE `new_s3credentials` (`id` text NOT NULL, `created_at` datetime NOT NULL, `badge_id` text NOT NULL, `project_id` text NOT NULL, `access_key_id` text NOT NULL, `secret_sealed` text NOT NULL, `previous_access_key_id` text NULL, `previous_secret_sealed` text NULL, `previous_expires_at` datetime NULL, `bucket` text NOT NULL, `role` text NOT NULL, `expires_at` datetime NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- copy rows from old table "s3credentials" to new temporary table "new_s3credentials"
INSERT INTO `new_s3credentials` (`id`, `created_at`, `badge_id`, `project_id`, `access_key_id`, `secret_sealed`, `bucket`, `role`, `expires_at`, `revoked_at`) SELECT `id`, `created_at`, `badge_id`, `project_id`, `access_key_id`, `secret_sealed`, `bucket`, `role`, `expires_at`, `revoked_at` FROM `s3credentials`;
-- drop "s3credentials" table after copying rows
DROP TABLE `s3credentials`;
-- rename temporary table "new_s3credentials" to "s3credentials"
ALTER TABLE `new_s3credentials` RENAME TO `s3credentials`;
-- create index "s3credentials_badge_id_key" to table: "s3credentials"
CREATE UNIQUE INDEX `s3credentials_badge_id_key` ON `s3credentials` (`badge_id`);
-- create index "s3credentials_access_key_id_key" to table: "s3credentials"
CREATE UNIQUE INDEX `s3credentials_access_key_id_key` ON `s3credentials` (`access_key_id`);
-- create index "s3credentials_previous_access_key_id_key" to table: "s3credentials"
CREATE UNIQUE INDEX `s3credentials_previous_access_key_id_key` ON `s3credentials` (`previous_access_key_id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "s3credentials_previous_access_key_id_key" to table: "s3credentials"
DROP INDEX `s3credentials_previous_access_key_id_key`;
-- reverse: create index "s3credentials_access_key_id_key" to table: "s3credentials"
DROP INDEX `s3credentials_access_key_id_key`;
-- reverse: create index "s3credentials_badge_id_key" to table: "s3credentials"
DROP INDEX `s3credentials_badge_id_key`;
-- reverse: create "new_s3credentials" table
DROP TABLE `new_s3credentials`;
-- reverse: create index "auth_clients_previous_secret_digest_key" to table: "auth_clients"
DROP INDEX `auth_clients_previous_secret_digest_key`;
-- reverse: create index "auth_clients_secret_digest_key" to table: "auth_clients"
DROP INDEX `auth_clients_secret_digest_key`;
-- reverse: create index "auth_clients_badge_id_key" to table: "auth_clients"
DROP INDEX `auth_clients_badge_id_key`;
-- reverse: create "new_auth_clients" table
DROP TABLE `new_auth_clients`;
-- reverse: create index "badge_project_id_id" to table: "badges"
DROP INDEX `badge_project_id_id`;
-- reverse: create index "badges_previous_digest_key" to table: "badges"
DROP INDEX `badges_previous_digest_key`;
-- reverse: create index "badges_digest_key" to table: "badges"
DROP INDEX `badges_digest_key`;
-- reverse: create "new_badges" table
DROP TABLE `new_badges`;
-- reverse: create index "agenttoken_project_id_id" to table: "agent_tokens"
DROP INDEX `agenttoken_project_id_id`;
-- reverse: create index "agent_tokens_previous_digest_key" to table: "agent_tokens"
DROP INDEX `agent_tokens_previous_digest_key`;
-- reverse: create index "agent_tokens_digest_key" to table: "agent_tokens"
DROP INDEX `agent_tokens_digest_key`;
-- reverse: create "new_agent_tokens" table
DROP TABLE `new_agent_tokens`;
