-- +goose Up
-- create "device_authorizations" table
CREATE TABLE `device_authorizations` (`id` text NOT NULL, `created_at` datetime NOT NULL, `device_code_digest` blob NOT NULL, `user_code_digest` blob NOT NULL, `client_id` text NOT NULL, `client_name` text NOT NULL, `scopes` json NOT NULL, `resources` json NOT NULL, `project_id` text NOT NULL, `tenant_id` text NOT NULL, `expires_at` datetime NOT NULL, `interval` integer NOT NULL, `last_polled_at` datetime NULL, `status` text NOT NULL DEFAULT ('pending'), `grant_id` text NULL, `user_id` text NULL, `sid` text NULL, `auth_time` datetime NULL, `amr` json NULL, PRIMARY KEY (`id`));
-- create index "device_authorizations_device_code_digest_key" to table: "device_authorizations"
CREATE UNIQUE INDEX `device_authorizations_device_code_digest_key` ON `device_authorizations` (`device_code_digest`);
-- create index "device_authorizations_user_code_digest_key" to table: "device_authorizations"
CREATE UNIQUE INDEX `device_authorizations_user_code_digest_key` ON `device_authorizations` (`user_code_digest`);
-- create index "deviceauthorization_expires_at" to table: "device_authorizations"
CREATE INDEX `deviceauthorization_expires_at` ON `device_authorizations` (`expires_at`);

-- +goose Down
-- reverse: create index "deviceauthorization_expires_at" to table: "device_authorizations"
DROP INDEX `deviceauthorization_expires_at`;
-- reverse: create index "device_authorizations_user_code_digest_key" to table: "device_authorizations"
DROP INDEX `device_authorizations_user_code_digest_key`;
-- reverse: create index "device_authorizations_device_code_digest_key" to table: "device_authorizations"
DROP INDEX `device_authorizations_device_code_digest_key`;
-- reverse: create "device_authorizations" table
DROP TABLE `device_authorizations`;
