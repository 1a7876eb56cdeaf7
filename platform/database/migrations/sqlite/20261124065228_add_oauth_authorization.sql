-- +goose Up
-- create "grant_refresh_tokens" table
CREATE TABLE `grant_refresh_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `digest` blob NOT NULL, `grant_id` text NOT NULL, `client_id` text NOT NULL, `scopes` json NOT NULL, `resources` json NOT NULL, `expires_at` datetime NOT NULL, `family_expires_at` datetime NOT NULL, `rotated_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "grant_refresh_tokens_digest_key" to table: "grant_refresh_tokens"
CREATE UNIQUE INDEX `grant_refresh_tokens_digest_key` ON `grant_refresh_tokens` (`digest`);
-- create index "grantrefreshtoken_grant_id" to table: "grant_refresh_tokens"
CREATE INDEX `grantrefreshtoken_grant_id` ON `grant_refresh_tokens` (`grant_id`);
-- create "oauth_authorizations" table
CREATE TABLE `oauth_authorizations` (`id` text NOT NULL, `created_at` datetime NOT NULL, `client_id` text NOT NULL, `client_name` text NOT NULL, `client_host` text NOT NULL, `redirect_uri` text NOT NULL, `state` text NOT NULL, `code_challenge` text NOT NULL, `scopes` json NOT NULL, `resources` json NOT NULL, `project_id` text NOT NULL, `expires_at` datetime NOT NULL, `decided_at` datetime NULL, PRIMARY KEY (`id`));
-- create "oauth_clients" table
CREATE TABLE `oauth_clients` (`id` text NOT NULL, `created_at` datetime NOT NULL, `name` text NOT NULL, `redirect_uris` json NOT NULL, `application_type` text NOT NULL, `grant_types` json NOT NULL, `client_uri` text NULL, PRIMARY KEY (`id`));
-- create "oauth_codes" table
CREATE TABLE `oauth_codes` (`id` text NOT NULL, `created_at` datetime NOT NULL, `digest` blob NOT NULL, `grant_id` text NOT NULL, `client_id` text NOT NULL, `redirect_uri` text NOT NULL, `code_challenge` text NOT NULL, `scopes` json NOT NULL, `resources` json NOT NULL, `expires_at` datetime NOT NULL, `used_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "oauth_codes_digest_key" to table: "oauth_codes"
CREATE UNIQUE INDEX `oauth_codes_digest_key` ON `oauth_codes` (`digest`);
-- create index "oauthcode_expires_at" to table: "oauth_codes"
CREATE INDEX `oauthcode_expires_at` ON `oauth_codes` (`expires_at`);
-- create "oauth_grants" table
CREATE TABLE `oauth_grants` (`id` text NOT NULL, `created_at` datetime NOT NULL, `client_id` text NOT NULL, `client_name` text NOT NULL, `client_host` text NOT NULL, `user_id` text NOT NULL, `project_id` text NOT NULL, `scopes` json NOT NULL, `resources` json NOT NULL, `updated_at` datetime NOT NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "oauthgrant_user_id_id" to table: "oauth_grants"
CREATE INDEX `oauthgrant_user_id_id` ON `oauth_grants` (`user_id`, `id`);
-- create index "oauthgrant_project_id_id" to table: "oauth_grants"
CREATE INDEX `oauthgrant_project_id_id` ON `oauth_grants` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "oauthgrant_project_id_id" to table: "oauth_grants"
DROP INDEX `oauthgrant_project_id_id`;
-- reverse: create index "oauthgrant_user_id_id" to table: "oauth_grants"
DROP INDEX `oauthgrant_user_id_id`;
-- reverse: create "oauth_grants" table
DROP TABLE `oauth_grants`;
-- reverse: create index "oauthcode_expires_at" to table: "oauth_codes"
DROP INDEX `oauthcode_expires_at`;
-- reverse: create index "oauth_codes_digest_key" to table: "oauth_codes"
DROP INDEX `oauth_codes_digest_key`;
-- reverse: create "oauth_codes" table
DROP TABLE `oauth_codes`;
-- reverse: create "oauth_clients" table
DROP TABLE `oauth_clients`;
-- reverse: create "oauth_authorizations" table
DROP TABLE `oauth_authorizations`;
-- reverse: create index "grantrefreshtoken_grant_id" to table: "grant_refresh_tokens"
DROP INDEX `grantrefreshtoken_grant_id`;
-- reverse: create index "grant_refresh_tokens_digest_key" to table: "grant_refresh_tokens"
DROP INDEX `grant_refresh_tokens_digest_key`;
-- reverse: create "grant_refresh_tokens" table
DROP TABLE `grant_refresh_tokens`;
