-- +goose Up
-- create "email_sign_ins" table
CREATE TABLE "email_sign_ins" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "tenant_id" character varying NOT NULL, "email" character varying NOT NULL, "token_digest" bytea NOT NULL, "code_mac" character varying NOT NULL, "attempts" bigint NOT NULL DEFAULT 0, "expires_at" timestamptz NOT NULL, "used_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "email_sign_ins_token_digest_key" to table: "email_sign_ins"
CREATE UNIQUE INDEX "email_sign_ins_token_digest_key" ON "email_sign_ins" ("token_digest");
-- create index "emailsignin_expires_at" to table: "email_sign_ins"
CREATE INDEX "emailsignin_expires_at" ON "email_sign_ins" ("expires_at");
-- create index "emailsignin_tenant_id_email_created_at" to table: "email_sign_ins"
CREATE INDEX "emailsignin_tenant_id_email_created_at" ON "email_sign_ins" ("tenant_id", "email", "created_at");
-- create "federation_flows" table
CREATE TABLE "federation_flows" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "tenant_id" character varying NOT NULL, "provider_id" character varying NOT NULL, "state_digest" bytea NOT NULL, "browser_digest" bytea NOT NULL, "nonce" character varying NOT NULL, "verifier_sealed" character varying NOT NULL, "purpose" character varying NOT NULL, "link_user_id" character varying NULL, "redirect" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "used_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "federation_flows_state_digest_key" to table: "federation_flows"
CREATE UNIQUE INDEX "federation_flows_state_digest_key" ON "federation_flows" ("state_digest");
-- create index "federationflow_expires_at" to table: "federation_flows"
CREATE INDEX "federationflow_expires_at" ON "federation_flows" ("expires_at");
-- create "identities" table
CREATE TABLE "identities" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "tenant_id" character varying NOT NULL, "user_id" character varying NOT NULL, "provider_id" character varying NOT NULL, "subject" character varying NOT NULL, "email" character varying NOT NULL DEFAULT '', "email_verified" boolean NOT NULL DEFAULT false, "tokens_sealed" character varying NOT NULL DEFAULT '', "last_used_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "identity_provider_id_subject" to table: "identities"
CREATE UNIQUE INDEX "identity_provider_id_subject" ON "identities" ("provider_id", "subject");
-- create index "identity_user_id" to table: "identities"
CREATE INDEX "identity_user_id" ON "identities" ("user_id");
-- create "provider_domains" table
CREATE TABLE "provider_domains" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "tenant_id" character varying NOT NULL, "provider_id" character varying NOT NULL, "domain" character varying NOT NULL, "verified_at" timestamptz NULL, "proof_digest" bytea NULL, "proof_expires_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "providerdomain_provider_id" to table: "provider_domains"
CREATE INDEX "providerdomain_provider_id" ON "provider_domains" ("provider_id");
-- create index "providerdomain_tenant_id_domain" to table: "provider_domains"
CREATE UNIQUE INDEX "providerdomain_tenant_id_domain" ON "provider_domains" ("tenant_id", "domain");
-- create "sign_in_methods" table
CREATE TABLE "sign_in_methods" ("id" character varying NOT NULL, "password" boolean NOT NULL DEFAULT true, "email_link" boolean NOT NULL DEFAULT false, "auto_link" boolean NOT NULL DEFAULT true, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create "sign_in_providers" table
CREATE TABLE "sign_in_providers" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "tenant_id" character varying NOT NULL, "type" character varying NOT NULL, "preset" character varying NOT NULL DEFAULT 'generic', "name" character varying NOT NULL, "issuer" character varying NOT NULL DEFAULT '', "authorization_endpoint" character varying NOT NULL DEFAULT '', "token_endpoint" character varying NOT NULL DEFAULT '', "userinfo_endpoint" character varying NOT NULL DEFAULT '', "client_id" character varying NOT NULL, "client_secret_sealed" character varying NOT NULL, "scopes" jsonb NOT NULL, "trust_email" boolean NOT NULL DEFAULT false, "claims" jsonb NOT NULL, "sso_required" boolean NOT NULL DEFAULT false, "offline" boolean NOT NULL DEFAULT false, "enabled" boolean NOT NULL DEFAULT true, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "signinprovider_tenant_id_id" to table: "sign_in_providers"
CREATE INDEX "signinprovider_tenant_id_id" ON "sign_in_providers" ("tenant_id", "id");

-- +goose Down
-- reverse: create index "signinprovider_tenant_id_id" to table: "sign_in_providers"
DROP INDEX "signinprovider_tenant_id_id";
-- reverse: create "sign_in_providers" table
DROP TABLE "sign_in_providers";
-- reverse: create "sign_in_methods" table
DROP TABLE "sign_in_methods";
-- reverse: create index "providerdomain_tenant_id_domain" to table: "provider_domains"
DROP INDEX "providerdomain_tenant_id_domain";
-- reverse: create index "providerdomain_provider_id" to table: "provider_domains"
DROP INDEX "providerdomain_provider_id";
-- reverse: create "provider_domains" table
DROP TABLE "provider_domains";
-- reverse: create index "identity_user_id" to table: "identities"
DROP INDEX "identity_user_id";
-- reverse: create index "identity_provider_id_subject" to table: "identities"
DROP INDEX "identity_provider_id_subject";
-- reverse: create "identities" table
DROP TABLE "identities";
-- reverse: create index "federationflow_expires_at" to table: "federation_flows"
DROP INDEX "federationflow_expires_at";
-- reverse: create index "federation_flows_state_digest_key" to table: "federation_flows"
DROP INDEX "federation_flows_state_digest_key";
-- reverse: create "federation_flows" table
DROP TABLE "federation_flows";
-- reverse: create index "emailsignin_tenant_id_email_created_at" to table: "email_sign_ins"
DROP INDEX "emailsignin_tenant_id_email_created_at";
-- reverse: create index "emailsignin_expires_at" to table: "email_sign_ins"
DROP INDEX "emailsignin_expires_at";
-- reverse: create index "email_sign_ins_token_digest_key" to table: "email_sign_ins"
DROP INDEX "email_sign_ins_token_digest_key";
-- reverse: create "email_sign_ins" table
DROP TABLE "email_sign_ins";
