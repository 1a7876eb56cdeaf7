-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- add column "amr" to table: "sessions"
ALTER TABLE `sessions` ADD COLUMN `amr` json NULL;
-- add column "auth_time" to table: "sessions"
ALTER TABLE `sessions` ADD COLUMN `auth_time` datetime NULL;
-- create "new_projects" table
CREATE TABLE `new_projects` (`id` text NOT NULL, `created_at` datetime NOT NULL, `name` text NOT NULL, `created_by` text NOT NULL, `agent_token_max_ttl_hours` integer NULL, `badge_max_expires_in_days` integer NULL, `allowed_scopes` json NULL, `require_mfa` bool NOT NULL DEFAULT (false), PRIMARY KEY (`id`));
-- copy rows from old table "projects" to new temporary table "new_projects"
INSERT INTO `new_projects` (`id`, `created_at`, `name`, `created_by`, `agent_token_max_ttl_hours`, `badge_max_expires_in_days`, `allowed_scopes`) SELECT `id`, `created_at`, `name`, `created_by`, `agent_token_max_ttl_hours`, `badge_max_expires_in_days`, `allowed_scopes` FROM `projects`;
-- drop "projects" table after copying rows
DROP TABLE `projects`;
-- rename temporary table "new_projects" to "projects"
ALTER TABLE `new_projects` RENAME TO `projects`;
-- create "mfa_challenges" table
CREATE TABLE `mfa_challenges` (`id` text NOT NULL, `created_at` datetime NOT NULL, `purpose` text NOT NULL, `tenant_id` text NOT NULL, `user_id` text NULL, `digest` blob NULL, `data` text NOT NULL DEFAULT (''), `expires_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "mfa_challenges_digest_key" to table: "mfa_challenges"
CREATE UNIQUE INDEX `mfa_challenges_digest_key` ON `mfa_challenges` (`digest`);
-- create index "mfachallenge_expires_at" to table: "mfa_challenges"
CREATE INDEX `mfachallenge_expires_at` ON `mfa_challenges` (`expires_at`);
-- create "mfa_factors" table
CREATE TABLE `mfa_factors` (`id` text NOT NULL, `created_at` datetime NOT NULL, `user_id` text NOT NULL, `tenant_id` text NOT NULL, `type` text NOT NULL, `name` text NOT NULL DEFAULT (''), `secret_sealed` text NULL, `confirmed_at` datetime NULL, `last_step` integer NOT NULL DEFAULT (0), `credential_id` blob NULL, `credential` text NULL, `last_used_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "mfa_factors_credential_id_key" to table: "mfa_factors"
CREATE UNIQUE INDEX `mfa_factors_credential_id_key` ON `mfa_factors` (`credential_id`);
-- create index "mfafactor_user_id" to table: "mfa_factors"
CREATE INDEX `mfafactor_user_id` ON `mfa_factors` (`user_id`);
-- create "mfa_recovery_codes" table
CREATE TABLE `mfa_recovery_codes` (`id` text NOT NULL, `created_at` datetime NOT NULL, `user_id` text NOT NULL, `digest` blob NOT NULL, `used_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "mfarecoverycode_user_id_digest" to table: "mfa_recovery_codes"
CREATE UNIQUE INDEX `mfarecoverycode_user_id_digest` ON `mfa_recovery_codes` (`user_id`, `digest`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "mfarecoverycode_user_id_digest" to table: "mfa_recovery_codes"
DROP INDEX `mfarecoverycode_user_id_digest`;
-- reverse: create "mfa_recovery_codes" table
DROP TABLE `mfa_recovery_codes`;
-- reverse: create index "mfafactor_user_id" to table: "mfa_factors"
DROP INDEX `mfafactor_user_id`;
-- reverse: create index "mfa_factors_credential_id_key" to table: "mfa_factors"
DROP INDEX `mfa_factors_credential_id_key`;
-- reverse: create "mfa_factors" table
DROP TABLE `mfa_factors`;
-- reverse: create index "mfachallenge_expires_at" to table: "mfa_challenges"
DROP INDEX `mfachallenge_expires_at`;
-- reverse: create index "mfa_challenges_digest_key" to table: "mfa_challenges"
DROP INDEX `mfa_challenges_digest_key`;
-- reverse: create "mfa_challenges" table
DROP TABLE `mfa_challenges`;
-- reverse: create "new_projects" table
DROP TABLE `new_projects`;
-- reverse: add column "auth_time" to table: "sessions"
ALTER TABLE `sessions` DROP COLUMN `auth_time`;
-- reverse: add column "amr" to table: "sessions"
ALTER TABLE `sessions` DROP COLUMN `amr`;
