-- +goose Up
-- create "refresh_tokens" table
CREATE TABLE `refresh_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `digest` blob NOT NULL, `session_id` text NOT NULL, `rotated_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "refresh_tokens_digest_key" to table: "refresh_tokens"
CREATE UNIQUE INDEX `refresh_tokens_digest_key` ON `refresh_tokens` (`digest`);
-- create index "refreshtoken_session_id" to table: "refresh_tokens"
CREATE INDEX `refreshtoken_session_id` ON `refresh_tokens` (`session_id`);
-- create "sessions" table
CREATE TABLE `sessions` (`id` text NOT NULL, `created_at` datetime NOT NULL, `user_id` text NOT NULL, `tenant_id` text NOT NULL, `payload` json NOT NULL, `user_agent` text NULL, `ip_hash` text NULL, `last_active_at` datetime NOT NULL, `expires_at` datetime NOT NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "session_user_id" to table: "sessions"
CREATE INDEX `session_user_id` ON `sessions` (`user_id`);
-- create index "session_tenant_id_created_at" to table: "sessions"
CREATE INDEX `session_tenant_id_created_at` ON `sessions` (`tenant_id`, `created_at`);
-- create index "session_created_at" to table: "sessions"
CREATE INDEX `session_created_at` ON `sessions` (`created_at`);
-- create "signing_keys" table
CREATE TABLE `signing_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `algorithm` text NOT NULL DEFAULT ('EdDSA'), `public_key` blob NOT NULL, `private_sealed` text NOT NULL, `retire_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create "users" table
CREATE TABLE `users` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `email` text NOT NULL, `password_hash` text NOT NULL, `metadata` text NOT NULL DEFAULT ('{}'), PRIMARY KEY (`id`));
-- create index "user_tenant_id_email" to table: "users"
CREATE UNIQUE INDEX `user_tenant_id_email` ON `users` (`tenant_id`, `email`);

-- +goose Down
-- reverse: create index "user_tenant_id_email" to table: "users"
DROP INDEX `user_tenant_id_email`;
-- reverse: create "users" table
DROP TABLE `users`;
-- reverse: create "signing_keys" table
DROP TABLE `signing_keys`;
-- reverse: create index "session_created_at" to table: "sessions"
DROP INDEX `session_created_at`;
-- reverse: create index "session_tenant_id_created_at" to table: "sessions"
DROP INDEX `session_tenant_id_created_at`;
-- reverse: create index "session_user_id" to table: "sessions"
DROP INDEX `session_user_id`;
-- reverse: create "sessions" table
DROP TABLE `sessions`;
-- reverse: create index "refreshtoken_session_id" to table: "refresh_tokens"
DROP INDEX `refreshtoken_session_id`;
-- reverse: create index "refresh_tokens_digest_key" to table: "refresh_tokens"
DROP INDEX `refresh_tokens_digest_key`;
-- reverse: create "refresh_tokens" table
DROP TABLE `refresh_tokens`;
