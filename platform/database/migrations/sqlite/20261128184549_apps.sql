-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_oauth_clients" table
CREATE TABLE `new_oauth_clients` (`id` text NOT NULL, `created_at` datetime NOT NULL, `name` text NOT NULL, `redirect_uris` json NOT NULL, `application_type` text NOT NULL, `grant_types` json NOT NULL, `client_uri` text NULL, `last_used_at` datetime NULL, `token_endpoint_auth_method` text NOT NULL DEFAULT ('none'), `secret_digest` blob NULL, `jwks` json NULL, `jwks_uri` text NULL, `post_logout_redirect_uris` json NULL, `scope` text NULL, `id_token_signed_response_alg` text NULL, `dpop_bound_access_tokens` bool NOT NULL DEFAULT (false), `project_id` text NULL, `app_type` text NULL, `first_party` bool NOT NULL DEFAULT (false), `backchannel_logout_uri` text NULL, `frontchannel_logout_uri` text NULL, `claims` json NULL, `previous_secret_digest` blob NULL, `previous_secret_expires_at` datetime NULL, PRIMARY KEY (`id`));
-- copy rows from old table "oauth_clients" to new temporary table "new_oauth_clients"
INSERT INTO `new_oauth_clients` (`id`, `created_at`, `name`, `redirect_uris`, `application_type`, `grant_types`, `client_uri`, `last_used_at`, `token_endpoint_auth_method`, `secret_digest`, `jwks`, `jwks_uri`, `post_logout_redirect_uris`, `scope`, `id_token_signed_response_alg`, `dpop_bound_access_tokens`) SELECT `id`, `created_at`, `name`, `redirect_uris`, `application_type`, `grant_types`, `client_uri`, `last_used_at`, `token_endpoint_auth_method`, `secret_digest`, `jwks`, `jwks_uri`, `post_logout_redirect_uris`, `scope`, `id_token_signed_response_alg`, `dpop_bound_access_tokens` FROM `oauth_clients`;
-- drop "oauth_clients" table after copying rows
DROP TABLE `oauth_clients`;
-- rename temporary table "new_oauth_clients" to "oauth_clients"
ALTER TABLE `new_oauth_clients` RENAME TO `oauth_clients`;
-- create index "oauthclient_project_id" to table: "oauth_clients"
CREATE INDEX `oauthclient_project_id` ON `oauth_clients` (`project_id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "oauthclient_project_id" to table: "oauth_clients"
DROP INDEX `oauthclient_project_id`;
-- reverse: create "new_oauth_clients" table
DROP TABLE `new_oauth_clients`;
