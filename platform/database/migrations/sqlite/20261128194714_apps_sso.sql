-- +goose Up
-- create "app_sessions" table
CREATE TABLE `app_sessions` (`id` text NOT NULL, `created_at` datetime NOT NULL, `sid` text NOT NULL, `client_id` text NOT NULL, `user_id` text NOT NULL, `project_id` text NOT NULL, PRIMARY KEY (`id`));
-- create index "appsession_sid_client_id" to table: "app_sessions"
CREATE UNIQUE INDEX `appsession_sid_client_id` ON `app_sessions` (`sid`, `client_id`);
-- create index "appsession_client_id" to table: "app_sessions"
CREATE INDEX `appsession_client_id` ON `app_sessions` (`client_id`);
-- create "logout_deliveries" table
CREATE TABLE `logout_deliveries` (`id` text NOT NULL, `created_at` datetime NOT NULL, `sid` text NOT NULL, `user_id` text NOT NULL, `client_id` text NOT NULL, `project_id` text NOT NULL, `url` text NOT NULL, `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NOT NULL, `locked_until` datetime NULL, `last_attempt_at` datetime NULL, `last_status_code` integer NULL, `last_error` text NULL, `delivered_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "logoutdelivery_status_next_attempt_at" to table: "logout_deliveries"
CREATE INDEX `logoutdelivery_status_next_attempt_at` ON `logout_deliveries` (`status`, `next_attempt_at`);
-- create index "logoutdelivery_client_id_id" to table: "logout_deliveries"
CREATE INDEX `logoutdelivery_client_id_id` ON `logout_deliveries` (`client_id`, `id`);
-- create index "logoutdelivery_created_at" to table: "logout_deliveries"
CREATE INDEX `logoutdelivery_created_at` ON `logout_deliveries` (`created_at`);
-- create "registration_tokens" table
CREATE TABLE `registration_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `digest` blob NOT NULL, `hint` text NOT NULL, `expires_at` datetime NOT NULL, `max_uses` integer NOT NULL, `uses` integer NOT NULL DEFAULT (0), `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "registration_tokens_digest_key" to table: "registration_tokens"
CREATE UNIQUE INDEX `registration_tokens_digest_key` ON `registration_tokens` (`digest`);
-- create index "registrationtoken_project_id_id" to table: "registration_tokens"
CREATE INDEX `registrationtoken_project_id_id` ON `registration_tokens` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "registrationtoken_project_id_id" to table: "registration_tokens"
DROP INDEX `registrationtoken_project_id_id`;
-- reverse: create index "registration_tokens_digest_key" to table: "registration_tokens"
DROP INDEX `registration_tokens_digest_key`;
-- reverse: create "registration_tokens" table
DROP TABLE `registration_tokens`;
-- reverse: create index "logoutdelivery_created_at" to table: "logout_deliveries"
DROP INDEX `logoutdelivery_created_at`;
-- reverse: create index "logoutdelivery_client_id_id" to table: "logout_deliveries"
DROP INDEX `logoutdelivery_client_id_id`;
-- reverse: create index "logoutdelivery_status_next_attempt_at" to table: "logout_deliveries"
DROP INDEX `logoutdelivery_status_next_attempt_at`;
-- reverse: create "logout_deliveries" table
DROP TABLE `logout_deliveries`;
-- reverse: create index "appsession_client_id" to table: "app_sessions"
DROP INDEX `appsession_client_id`;
-- reverse: create index "appsession_sid_client_id" to table: "app_sessions"
DROP INDEX `appsession_sid_client_id`;
-- reverse: create "app_sessions" table
DROP TABLE `app_sessions`;
