-- +goose Up
-- add column "successor" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `successor` text NULL;
-- add column "client_uri" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `client_uri` text NULL;
-- add column "browser" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `browser` blob NULL;
-- add column "session_handle" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `session_handle` text NULL;
-- add column "last_used_at" to table: "oauth_clients"
ALTER TABLE `oauth_clients` ADD COLUMN `last_used_at` datetime NULL;

-- +goose Down
-- reverse: add column "last_used_at" to table: "oauth_clients"
ALTER TABLE `oauth_clients` DROP COLUMN `last_used_at`;
-- reverse: add column "session_handle" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `session_handle`;
-- reverse: add column "browser" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `browser`;
-- reverse: add column "client_uri" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `client_uri`;
-- reverse: add column "successor" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `successor`;
