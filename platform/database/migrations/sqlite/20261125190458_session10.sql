-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- add column "dpop_jkt" to table: "agent_tokens"
ALTER TABLE `agent_tokens` ADD COLUMN `dpop_jkt` text NULL;
-- add column "keys" to table: "auth_clients"
ALTER TABLE `auth_clients` ADD COLUMN `keys` json NULL;
-- add column "scopes" to table: "auth_clients"
ALTER TABLE `auth_clients` ADD COLUMN `scopes` json NULL;
-- create "new_resources" table
CREATE TABLE `new_resources` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `uri` text NOT NULL, `canonical_uri` text NULL, `name` text NOT NULL, `scopes` json NOT NULL, `created_by` text NULL, PRIMARY KEY (`id`));
-- copy rows from old table "resources" to new temporary table "new_resources"
INSERT INTO `new_resources` (`id`, `created_at`, `project_id`, `uri`, `name`, `scopes`, `created_by`) SELECT `id`, `created_at`, `project_id`, `uri`, `name`, `scopes`, `created_by` FROM `resources`;
-- drop "resources" table after copying rows
DROP TABLE `resources`;
-- rename temporary table "new_resources" to "resources"
ALTER TABLE `new_resources` RENAME TO `resources`;
-- create index "resources_uri_key" to table: "resources"
CREATE UNIQUE INDEX `resources_uri_key` ON `resources` (`uri`);
-- create index "resources_canonical_uri_key" to table: "resources"
CREATE UNIQUE INDEX `resources_canonical_uri_key` ON `resources` (`canonical_uri`);
-- create index "resource_project_id_id" to table: "resources"
CREATE INDEX `resource_project_id_id` ON `resources` (`project_id`, `id`);
-- add column "successor" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `successor` text NULL;
-- add column "jkt" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `jkt` text NULL;
-- add column "auth_time" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `auth_time` datetime NULL;
-- add column "amr" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `amr` json NULL;
-- add column "sid" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` ADD COLUMN `sid` text NULL;
-- add column "client_uri" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `client_uri` text NULL;
-- add column "browser" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `browser` blob NULL;
-- add column "session_handle" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `session_handle` text NULL;
-- add column "nonce" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `nonce` text NULL;
-- add column "prompt" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `prompt` text NULL;
-- add column "max_age" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` ADD COLUMN `max_age` integer NULL;
-- create "new_oauth_clients" table
CREATE TABLE `new_oauth_clients` (`id` text NOT NULL, `created_at` datetime NOT NULL, `name` text NOT NULL, `redirect_uris` json NOT NULL, `application_type` text NOT NULL, `grant_types` json NOT NULL, `client_uri` text NULL, `last_used_at` datetime NULL, `token_endpoint_auth_method` text NOT NULL DEFAULT ('none'), `secret_digest` blob NULL, `jwks` json NULL, `jwks_uri` text NULL, `post_logout_redirect_uris` json NULL, `scope` text NULL, `id_token_signed_response_alg` text NULL, `dpop_bound_access_tokens` bool NOT NULL DEFAULT (false), PRIMARY KEY (`id`));
-- copy rows from old table "oauth_clients" to new temporary table "new_oauth_clients"
INSERT INTO `new_oauth_clients` (`id`, `created_at`, `name`, `redirect_uris`, `application_type`, `grant_types`, `client_uri`) SELECT `id`, `created_at`, `name`, `redirect_uris`, `application_type`, `grant_types`, `client_uri` FROM `oauth_clients`;
-- drop "oauth_clients" table after copying rows
DROP TABLE `oauth_clients`;
-- rename temporary table "new_oauth_clients" to "oauth_clients"
ALTER TABLE `new_oauth_clients` RENAME TO `oauth_clients`;
-- add column "nonce" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `nonce` text NULL;
-- add column "auth_time" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `auth_time` datetime NULL;
-- add column "amr" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `amr` json NULL;
-- add column "sid" to table: "oauth_codes"
ALTER TABLE `oauth_codes` ADD COLUMN `sid` text NULL;
-- create "authorization_detail_types" table
CREATE TABLE `authorization_detail_types` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `type` text NOT NULL, `name` text NOT NULL, `schema` text NOT NULL, `schema_digest` text NOT NULL, `created_by` text NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
CREATE UNIQUE INDEX `authorizationdetailtype_project_id_type` ON `authorization_detail_types` (`project_id`, `type`);
-- create "backchannel_clients" table
CREATE TABLE `backchannel_clients` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `client_id` text NOT NULL, `delivery_mode` text NOT NULL, `notification_endpoint` text NOT NULL DEFAULT (''), `secret_sealed` text NOT NULL DEFAULT (''), `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
CREATE UNIQUE INDEX `backchannelclient_project_id_client_id` ON `backchannel_clients` (`project_id`, `client_id`);
-- create "backchannel_requests" table
CREATE TABLE `backchannel_requests` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `client_id` text NOT NULL, `client_name` text NOT NULL DEFAULT (''), `user_id` text NOT NULL, `req_digest` blob NOT NULL, `scopes` json NOT NULL, `audience` json NOT NULL, `binding_message` text NOT NULL DEFAULT (''), `authorization_details` text NOT NULL, `type_digests` json NOT NULL, `details_digest` text NOT NULL, `status` text NOT NULL, `interval` integer NOT NULL, `expires_at` datetime NOT NULL, `last_polled_at` datetime NULL, `decided_at` datetime NULL, `auth_time` datetime NULL, `delivery_mode` text NOT NULL, `ping_sealed` text NOT NULL DEFAULT (''), `ping_next_at` datetime NULL, `ping_locked_until` datetime NULL, `ping_attempts` integer NOT NULL DEFAULT (0), `ping_delivered_at` datetime NULL, `ping_last_error` text NOT NULL DEFAULT (''), PRIMARY KEY (`id`));
-- create index "backchannelrequest_req_digest" to table: "backchannel_requests"
CREATE UNIQUE INDEX `backchannelrequest_req_digest` ON `backchannel_requests` (`req_digest`);
-- create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_user_id_status` ON `backchannel_requests` (`user_id`, `status`);
-- create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_client_id_user_id_status` ON `backchannel_requests` (`client_id`, `user_id`, `status`);
-- create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_ping_next_at` ON `backchannel_requests` (`ping_next_at`);
-- create index "backchannelrequest_expires_at" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_expires_at` ON `backchannel_requests` (`expires_at`);
-- create "deploy_keys" table
CREATE TABLE `deploy_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `created_by` text NULL, `expires_at` datetime NULL, `digest` blob NOT NULL, `previous_digest` blob NULL, `previous_expires_at` datetime NULL, `revoked_at` datetime NULL, `last_used_at` datetime NULL, `secret_hint` text NOT NULL, `name` text NOT NULL, `repository` text NULL, PRIMARY KEY (`id`));
-- create index "deploy_keys_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX `deploy_keys_digest_key` ON `deploy_keys` (`digest`);
-- create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX `deploy_keys_previous_digest_key` ON `deploy_keys` (`previous_digest`);
-- create index "deploykey_project_id_id" to table: "deploy_keys"
CREATE INDEX `deploykey_project_id_id` ON `deploy_keys` (`project_id`, `id`);
-- create "email_sign_ins" table
CREATE TABLE `email_sign_ins` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `email` text NOT NULL, `token_digest` blob NOT NULL, `code_mac` text NOT NULL, `attempts` integer NOT NULL DEFAULT (0), `expires_at` datetime NOT NULL, `used_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "email_sign_ins_token_digest_key" to table: "email_sign_ins"
CREATE UNIQUE INDEX `email_sign_ins_token_digest_key` ON `email_sign_ins` (`token_digest`);
-- create index "emailsignin_tenant_id_email_created_at" to table: "email_sign_ins"
CREATE INDEX `emailsignin_tenant_id_email_created_at` ON `email_sign_ins` (`tenant_id`, `email`, `created_at`);
-- create index "emailsignin_expires_at" to table: "email_sign_ins"
CREATE INDEX `emailsignin_expires_at` ON `email_sign_ins` (`expires_at`);
-- create "federation_flows" table
CREATE TABLE `federation_flows` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `provider_id` text NOT NULL, `state_digest` blob NOT NULL, `browser_digest` blob NOT NULL, `nonce` text NOT NULL, `verifier_sealed` text NOT NULL, `purpose` text NOT NULL, `link_user_id` text NULL, `redirect` text NOT NULL, `expires_at` datetime NOT NULL, `used_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "federation_flows_state_digest_key" to table: "federation_flows"
CREATE UNIQUE INDEX `federation_flows_state_digest_key` ON `federation_flows` (`state_digest`);
-- create index "federationflow_expires_at" to table: "federation_flows"
CREATE INDEX `federationflow_expires_at` ON `federation_flows` (`expires_at`);
-- create "identities" table
CREATE TABLE `identities` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `user_id` text NOT NULL, `provider_id` text NOT NULL, `subject` text NOT NULL, `email` text NOT NULL DEFAULT (''), `email_verified` bool NOT NULL DEFAULT (false), `tokens_sealed` text NOT NULL DEFAULT (''), `last_used_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "identity_provider_id_subject" to table: "identities"
CREATE UNIQUE INDEX `identity_provider_id_subject` ON `identities` (`provider_id`, `subject`);
-- create index "identity_user_id" to table: "identities"
CREATE INDEX `identity_user_id` ON `identities` (`user_id`);
-- create "invitations" table
CREATE TABLE `invitations` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `email` text NOT NULL, `role` text NOT NULL, `digest` blob NOT NULL, `created_by` text NOT NULL, `expires_at` datetime NOT NULL, `accepted_at` datetime NULL, `accepted_by` text NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "invitations_digest_key" to table: "invitations"
CREATE UNIQUE INDEX `invitations_digest_key` ON `invitations` (`digest`);
-- create index "invitation_project_id_email" to table: "invitations"
CREATE INDEX `invitation_project_id_email` ON `invitations` (`project_id`, `email`);
-- create index "invitation_email_created_at" to table: "invitations"
CREATE INDEX `invitation_email_created_at` ON `invitations` (`email`, `created_at`);
-- create "provider_domains" table
CREATE TABLE `provider_domains` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `provider_id` text NOT NULL, `domain` text NOT NULL, `verified_at` datetime NULL, `proof_digest` blob NULL, `proof_expires_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "providerdomain_tenant_id_domain" to table: "provider_domains"
CREATE UNIQUE INDEX `providerdomain_tenant_id_domain` ON `provider_domains` (`tenant_id`, `domain`);
-- create index "providerdomain_provider_id" to table: "provider_domains"
CREATE INDEX `providerdomain_provider_id` ON `provider_domains` (`provider_id`);
-- create "sign_in_methods" table
CREATE TABLE `sign_in_methods` (`id` text NOT NULL, `password` bool NOT NULL DEFAULT (true), `email_link` bool NOT NULL DEFAULT (false), `auto_link` bool NOT NULL DEFAULT (true), `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create "sign_in_providers" table
CREATE TABLE `sign_in_providers` (`id` text NOT NULL, `created_at` datetime NOT NULL, `tenant_id` text NOT NULL, `type` text NOT NULL, `preset` text NOT NULL DEFAULT ('generic'), `name` text NOT NULL, `issuer` text NOT NULL DEFAULT (''), `authorization_endpoint` text NOT NULL DEFAULT (''), `token_endpoint` text NOT NULL DEFAULT (''), `userinfo_endpoint` text NOT NULL DEFAULT (''), `client_id` text NOT NULL, `client_secret_sealed` text NOT NULL, `scopes` json NOT NULL, `trust_email` bool NOT NULL DEFAULT (false), `claims` json NOT NULL, `sso_required` bool NOT NULL DEFAULT (false), `offline` bool NOT NULL DEFAULT (false), `enabled` bool NOT NULL DEFAULT (true), `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "signinprovider_tenant_id_id" to table: "sign_in_providers"
CREATE INDEX `signinprovider_tenant_id_id` ON `sign_in_providers` (`tenant_id`, `id`);
-- create "trusted_authorization_servers" table
CREATE TABLE `trusted_authorization_servers` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `issuer` text NOT NULL, `client_id` text NOT NULL, `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "trustedauthorizationserver_project_id_issuer" to table: "trusted_authorization_servers"
CREATE UNIQUE INDEX `trustedauthorizationserver_project_id_issuer` ON `trusted_authorization_servers` (`project_id`, `issuer`);
-- create index "trustedauthorizationserver_issuer" to table: "trusted_authorization_servers"
CREATE INDEX `trustedauthorizationserver_issuer` ON `trusted_authorization_servers` (`issuer`);
-- create "trusted_issuers" table
CREATE TABLE `trusted_issuers` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `issuer` text NOT NULL, `kind` text NOT NULL, `name` text NOT NULL, `jwks_uri` text NULL, `jwks` json NULL, `audience` text NULL, `subject_claim` text NOT NULL DEFAULT ('sub'), `subject_pattern` text NULL, `scopes` json NOT NULL, `resources` json NOT NULL, `trust_email` bool NOT NULL DEFAULT (false), `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "trustedissuer_project_id_issuer" to table: "trusted_issuers"
CREATE UNIQUE INDEX `trustedissuer_project_id_issuer` ON `trusted_issuers` (`project_id`, `issuer`);
-- create "used_assertions" table
CREATE TABLE `used_assertions` (`id` text NOT NULL, `created_at` datetime NOT NULL, `issuer` text NOT NULL, `jti` text NOT NULL, `expires_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "usedassertion_issuer_jti" to table: "used_assertions"
CREATE UNIQUE INDEX `usedassertion_issuer_jti` ON `used_assertions` (`issuer`, `jti`);
-- create index "usedassertion_expires_at" to table: "used_assertions"
CREATE INDEX `usedassertion_expires_at` ON `used_assertions` (`expires_at`);
-- create "vault_connections" table
CREATE TABLE `vault_connections` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `provider_id` text NOT NULL, `user_id` text NOT NULL, `agents` json NOT NULL, `tokens_sealed` text NOT NULL, `access_expires_at` datetime NULL, `scope` text NOT NULL DEFAULT (''), `version` integer NOT NULL DEFAULT (0), `lease_until` datetime NULL, `lease_owner` text NOT NULL DEFAULT (''), `last_refreshed_at` datetime NULL, `broken_at` datetime NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
CREATE UNIQUE INDEX `vaultconnection_provider_id_user_id` ON `vault_connections` (`provider_id`, `user_id`);
-- create index "vaultconnection_user_id" to table: "vault_connections"
CREATE INDEX `vaultconnection_user_id` ON `vault_connections` (`user_id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "vaultconnection_user_id" to table: "vault_connections"
DROP INDEX `vaultconnection_user_id`;
-- reverse: create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
DROP INDEX `vaultconnection_provider_id_user_id`;
-- reverse: create "vault_connections" table
DROP TABLE `vault_connections`;
-- reverse: create index "usedassertion_expires_at" to table: "used_assertions"
DROP INDEX `usedassertion_expires_at`;
-- reverse: create index "usedassertion_issuer_jti" to table: "used_assertions"
DROP INDEX `usedassertion_issuer_jti`;
-- reverse: create "used_assertions" table
DROP TABLE `used_assertions`;
-- reverse: create index "trustedissuer_project_id_issuer" to table: "trusted_issuers"
DROP INDEX `trustedissuer_project_id_issuer`;
-- reverse: create "trusted_issuers" table
DROP TABLE `trusted_issuers`;
-- reverse: create index "trustedauthorizationserver_issuer" to table: "trusted_authorization_servers"
DROP INDEX `trustedauthorizationserver_issuer`;
-- reverse: create index "trustedauthorizationserver_project_id_issuer" to table: "trusted_authorization_servers"
DROP INDEX `trustedauthorizationserver_project_id_issuer`;
-- reverse: create "trusted_authorization_servers" table
DROP TABLE `trusted_authorization_servers`;
-- reverse: create index "signinprovider_tenant_id_id" to table: "sign_in_providers"
DROP INDEX `signinprovider_tenant_id_id`;
-- reverse: create "sign_in_providers" table
DROP TABLE `sign_in_providers`;
-- reverse: create "sign_in_methods" table
DROP TABLE `sign_in_methods`;
-- reverse: create index "providerdomain_provider_id" to table: "provider_domains"
DROP INDEX `providerdomain_provider_id`;
-- reverse: create index "providerdomain_tenant_id_domain" to table: "provider_domains"
DROP INDEX `providerdomain_tenant_id_domain`;
-- reverse: create "provider_domains" table
DROP TABLE `provider_domains`;
-- reverse: create index "invitation_email_created_at" to table: "invitations"
DROP INDEX `invitation_email_created_at`;
-- reverse: create index "invitation_project_id_email" to table: "invitations"
DROP INDEX `invitation_project_id_email`;
-- reverse: create index "invitations_digest_key" to table: "invitations"
DROP INDEX `invitations_digest_key`;
-- reverse: create "invitations" table
DROP TABLE `invitations`;
-- reverse: create index "identity_user_id" to table: "identities"
DROP INDEX `identity_user_id`;
-- reverse: create index "identity_provider_id_subject" to table: "identities"
DROP INDEX `identity_provider_id_subject`;
-- reverse: create "identities" table
DROP TABLE `identities`;
-- reverse: create index "federationflow_expires_at" to table: "federation_flows"
DROP INDEX `federationflow_expires_at`;
-- reverse: create index "federation_flows_state_digest_key" to table: "federation_flows"
DROP INDEX `federation_flows_state_digest_key`;
-- reverse: create "federation_flows" table
DROP TABLE `federation_flows`;
-- reverse: create index "emailsignin_expires_at" to table: "email_sign_ins"
DROP INDEX `emailsignin_expires_at`;
-- reverse: create index "emailsignin_tenant_id_email_created_at" to table: "email_sign_ins"
DROP INDEX `emailsignin_tenant_id_email_created_at`;
-- reverse: create index "email_sign_ins_token_digest_key" to table: "email_sign_ins"
DROP INDEX `email_sign_ins_token_digest_key`;
-- reverse: create "email_sign_ins" table
DROP TABLE `email_sign_ins`;
-- reverse: create index "deploykey_project_id_id" to table: "deploy_keys"
DROP INDEX `deploykey_project_id_id`;
-- reverse: create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
DROP INDEX `deploy_keys_previous_digest_key`;
-- reverse: create index "deploy_keys_digest_key" to table: "deploy_keys"
DROP INDEX `deploy_keys_digest_key`;
-- reverse: create "deploy_keys" table
DROP TABLE `deploy_keys`;
-- reverse: create index "backchannelrequest_expires_at" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_expires_at`;
-- reverse: create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_ping_next_at`;
-- reverse: create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_client_id_user_id_status`;
-- reverse: create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_user_id_status`;
-- reverse: create index "backchannelrequest_req_digest" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_req_digest`;
-- reverse: create "backchannel_requests" table
DROP TABLE `backchannel_requests`;
-- reverse: create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
DROP INDEX `backchannelclient_project_id_client_id`;
-- reverse: create "backchannel_clients" table
DROP TABLE `backchannel_clients`;
-- reverse: create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
DROP INDEX `authorizationdetailtype_project_id_type`;
-- reverse: create "authorization_detail_types" table
DROP TABLE `authorization_detail_types`;
-- reverse: add column "sid" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `sid`;
-- reverse: add column "amr" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `amr`;
-- reverse: add column "auth_time" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `auth_time`;
-- reverse: add column "nonce" to table: "oauth_codes"
ALTER TABLE `oauth_codes` DROP COLUMN `nonce`;
-- reverse: create "new_oauth_clients" table
DROP TABLE `new_oauth_clients`;
-- reverse: add column "max_age" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `max_age`;
-- reverse: add column "prompt" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `prompt`;
-- reverse: add column "nonce" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `nonce`;
-- reverse: add column "session_handle" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `session_handle`;
-- reverse: add column "browser" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `browser`;
-- reverse: add column "client_uri" to table: "oauth_authorizations"
ALTER TABLE `oauth_authorizations` DROP COLUMN `client_uri`;
-- reverse: add column "sid" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `sid`;
-- reverse: add column "amr" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `amr`;
-- reverse: add column "auth_time" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `auth_time`;
-- reverse: add column "jkt" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `jkt`;
-- reverse: add column "successor" to table: "grant_refresh_tokens"
ALTER TABLE `grant_refresh_tokens` DROP COLUMN `successor`;
-- reverse: create index "resource_project_id_id" to table: "resources"
DROP INDEX `resource_project_id_id`;
-- reverse: create index "resources_canonical_uri_key" to table: "resources"
DROP INDEX `resources_canonical_uri_key`;
-- reverse: create index "resources_uri_key" to table: "resources"
DROP INDEX `resources_uri_key`;
-- reverse: create "new_resources" table
DROP TABLE `new_resources`;
-- reverse: add column "scopes" to table: "auth_clients"
ALTER TABLE `auth_clients` DROP COLUMN `scopes`;
-- reverse: add column "keys" to table: "auth_clients"
ALTER TABLE `auth_clients` DROP COLUMN `keys`;
-- reverse: add column "dpop_jkt" to table: "agent_tokens"
ALTER TABLE `agent_tokens` DROP COLUMN `dpop_jkt`;
