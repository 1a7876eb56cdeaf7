-- +goose Up
-- create "deploy_keys" table
CREATE TABLE `deploy_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `created_by` text NULL, `expires_at` datetime NULL, `digest` blob NOT NULL, `previous_digest` blob NULL, `previous_expires_at` datetime NULL, `revoked_at` datetime NULL, `last_used_at` datetime NULL, `secret_hint` text NOT NULL, `name` text NOT NULL, `repository` text NULL, PRIMARY KEY (`id`));
-- create index "deploy_keys_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX `deploy_keys_digest_key` ON `deploy_keys` (`digest`);
-- create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX `deploy_keys_previous_digest_key` ON `deploy_keys` (`previous_digest`);
-- create index "deploykey_project_id_id" to table: "deploy_keys"
CREATE INDEX `deploykey_project_id_id` ON `deploy_keys` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "deploykey_project_id_id" to table: "deploy_keys"
DROP INDEX `deploykey_project_id_id`;
-- reverse: create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
DROP INDEX `deploy_keys_previous_digest_key`;
-- reverse: create index "deploy_keys_digest_key" to table: "deploy_keys"
DROP INDEX `deploy_keys_digest_key`;
-- reverse: create "deploy_keys" table
DROP TABLE `deploy_keys`;
