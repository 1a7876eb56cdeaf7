-- +goose Up
-- add column "org_id" to table: "sessions"
ALTER TABLE `sessions` ADD COLUMN `org_id` text NULL;
-- add column "org_id" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `org_id` text NULL;
-- add column "org_id" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `org_id` text NULL;
-- add column "org_id" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `org_id` text NULL;

-- +goose Down
-- reverse: add column "org_id" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `org_id`;
-- reverse: add column "org_id" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `org_id`;
-- reverse: add column "org_id" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `org_id`;
-- reverse: add column "org_id" to table: "sessions"
ALTER TABLE `sessions` DROP COLUMN `org_id`;
