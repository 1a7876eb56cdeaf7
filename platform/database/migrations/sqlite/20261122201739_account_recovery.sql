-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_users" table
CREATE TABLE `new_users` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `email` text NOT NULL, `password_hash` text NOT NULL, `metadata` text NOT NULL DEFAULT ('{}'), `email_verified` bool NOT NULL DEFAULT (false), PRIMARY KEY (`id`));
-- copy rows from old table "users" to new temporary table "new_users"
INSERT INTO `new_users` (`id`, `created_at`, `tenant_id`, `email`, `password_hash`, `metadata`) SELECT `id`, `created_at`, `tenant_id`, `email`, `password_hash`, `metadata` FROM `users`;
-- drop "users" table after copying rows
DROP TABLE `users`;
-- rename temporary table "new_users" to "users"
ALTER TABLE `new_users` RENAME TO `users`;
-- create index "user_tenant_id_email" to table: "users"
CREATE UNIQUE INDEX `user_tenant_id_email` ON `users` (`tenant_id`, `email`);
-- create "user_tokens" table
CREATE TABLE `user_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `user_id` text NOT NULL, `purpose` text NOT NULL, `digest` blob NOT NULL, `expires_at` datetime NOT NULL, `used_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "user_tokens_digest_key" to table: "user_tokens"
CREATE UNIQUE INDEX `user_tokens_digest_key` ON `user_tokens` (`digest`);
-- create index "usertoken_user_id_purpose_created_at" to table: "user_tokens"
CREATE INDEX `usertoken_user_id_purpose_created_at` ON `user_tokens` (`user_id`, `purpose`, `created_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "usertoken_user_id_purpose_created_at" to table: "user_tokens"
DROP INDEX `usertoken_user_id_purpose_created_at`;
-- reverse: create index "user_tokens_digest_key" to table: "user_tokens"
DROP INDEX `user_tokens_digest_key`;
-- reverse: create "user_tokens" table
DROP TABLE `user_tokens`;
-- reverse: create index "user_tenant_id_email" to table: "users"
DROP INDEX `user_tenant_id_email`;
-- reverse: create "new_users" table
DROP TABLE `new_users`;
