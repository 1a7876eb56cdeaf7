-- +goose Up
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

-- +goose Down
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
