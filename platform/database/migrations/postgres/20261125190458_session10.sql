-- +goose Up
-- modify "agent_tokens" table
ALTER TABLE "agent_tokens" ADD COLUMN "dpop_jkt" character varying NULL;
-- modify "auth_clients" table
ALTER TABLE "auth_clients" ADD COLUMN "keys" jsonb NULL, ADD COLUMN "scopes" jsonb NULL;
-- modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" ADD COLUMN "successor" character varying NULL, ADD COLUMN "jkt" character varying NULL, ADD COLUMN "auth_time" timestamptz NULL, ADD COLUMN "amr" jsonb NULL, ADD COLUMN "sid" character varying NULL;
-- modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" ADD COLUMN "client_uri" character varying NULL, ADD COLUMN "browser" bytea NULL, ADD COLUMN "session_handle" character varying NULL, ADD COLUMN "nonce" character varying NULL, ADD COLUMN "prompt" character varying NULL, ADD COLUMN "max_age" bigint NULL;
-- modify "oauth_clients" table
ALTER TABLE "oauth_clients" ADD COLUMN "last_used_at" timestamptz NULL, ADD COLUMN "token_endpoint_auth_method" character varying NOT NULL DEFAULT 'none', ADD COLUMN "secret_digest" bytea NULL, ADD COLUMN "jwks" jsonb NULL, ADD COLUMN "jwks_uri" character varying NULL, ADD COLUMN "post_logout_redirect_uris" jsonb NULL, ADD COLUMN "scope" character varying NULL, ADD COLUMN "id_token_signed_response_alg" character varying NULL, ADD COLUMN "dpop_bound_access_tokens" boolean NOT NULL DEFAULT false;
-- modify "oauth_codes" table
ALTER TABLE "oauth_codes" ADD COLUMN "nonce" character varying NULL, ADD COLUMN "auth_time" timestamptz NULL, ADD COLUMN "amr" jsonb NULL, ADD COLUMN "sid" character varying NULL;
-- modify "resources" table
ALTER TABLE "resources" ADD COLUMN "canonical_uri" character varying NULL;
-- create index "resources_canonical_uri_key" to table: "resources"
CREATE UNIQUE INDEX "resources_canonical_uri_key" ON "resources" ("canonical_uri");
-- create "authorization_detail_types" table
CREATE TABLE "authorization_detail_types" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "type" character varying NOT NULL, "name" character varying NOT NULL, "schema" text NOT NULL, "schema_digest" character varying NOT NULL, "created_by" character varying NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
CREATE UNIQUE INDEX "authorizationdetailtype_project_id_type" ON "authorization_detail_types" ("project_id", "type");
-- create "backchannel_clients" table
CREATE TABLE "backchannel_clients" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "client_id" character varying NOT NULL, "delivery_mode" character varying NOT NULL, "notification_endpoint" character varying NOT NULL DEFAULT '', "secret_sealed" character varying NOT NULL DEFAULT '', "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
CREATE UNIQUE INDEX "backchannelclient_project_id_client_id" ON "backchannel_clients" ("project_id", "client_id");
-- create "backchannel_requests" table
CREATE TABLE "backchannel_requests" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "client_id" character varying NOT NULL, "client_name" character varying NOT NULL DEFAULT '', "user_id" character varying NOT NULL, "req_digest" bytea NOT NULL, "scopes" jsonb NOT NULL, "audience" jsonb NOT NULL, "binding_message" character varying NOT NULL DEFAULT '', "authorization_details" text NOT NULL, "type_digests" jsonb NOT NULL, "details_digest" character varying NOT NULL, "status" character varying NOT NULL, "interval" bigint NOT NULL, "expires_at" timestamptz NOT NULL, "last_polled_at" timestamptz NULL, "decided_at" timestamptz NULL, "auth_time" timestamptz NULL, "delivery_mode" character varying NOT NULL, "ping_sealed" character varying NOT NULL DEFAULT '', "ping_next_at" timestamptz NULL, "ping_locked_until" timestamptz NULL, "ping_attempts" bigint NOT NULL DEFAULT 0, "ping_delivered_at" timestamptz NULL, "ping_last_error" character varying NOT NULL DEFAULT '', PRIMARY KEY ("id"));
-- create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_client_id_user_id_status" ON "backchannel_requests" ("client_id", "user_id", "status");
-- create index "backchannelrequest_expires_at" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_expires_at" ON "backchannel_requests" ("expires_at");
-- create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_ping_next_at" ON "backchannel_requests" ("ping_next_at");
-- create index "backchannelrequest_req_digest" to table: "backchannel_requests"
CREATE UNIQUE INDEX "backchannelrequest_req_digest" ON "backchannel_requests" ("req_digest");
-- create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_user_id_status" ON "backchannel_requests" ("user_id", "status");
-- create "deploy_keys" table
CREATE TABLE "deploy_keys" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "created_by" character varying NULL, "expires_at" timestamptz NULL, "digest" bytea NOT NULL, "previous_digest" bytea NULL, "previous_expires_at" timestamptz NULL, "revoked_at" timestamptz NULL, "last_used_at" timestamptz NULL, "secret_hint" character varying NOT NULL, "name" character varying NOT NULL, "repository" character varying NULL, PRIMARY KEY ("id"));
-- create index "deploy_keys_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX "deploy_keys_digest_key" ON "deploy_keys" ("digest");
-- create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX "deploy_keys_previous_digest_key" ON "deploy_keys" ("previous_digest");
-- create index "deploykey_project_id_id" to table: "deploy_keys"
CREATE INDEX "deploykey_project_id_id" ON "deploy_keys" ("project_id", "id");
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
-- create "invitations" table
CREATE TABLE "invitations" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "email" character varying NOT NULL, "role" character varying NOT NULL, "digest" bytea NOT NULL, "created_by" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "accepted_at" timestamptz NULL, "accepted_by" character varying NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "invitation_email_created_at" to table: "invitations"
CREATE INDEX "invitation_email_created_at" ON "invitations" ("email", "created_at");
-- create index "invitation_project_id_email" to table: "invitations"
CREATE INDEX "invitation_project_id_email" ON "invitations" ("project_id", "email");
-- create index "invitations_digest_key" to table: "invitations"
CREATE UNIQUE INDEX "invitations_digest_key" ON "invitations" ("digest");
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
-- create "trusted_authorization_servers" table
CREATE TABLE "trusted_authorization_servers" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "issuer" character varying NOT NULL, "client_id" character varying NOT NULL, "created_by" character varying NULL, PRIMARY KEY ("id"));
-- create index "trustedauthorizationserver_issuer" to table: "trusted_authorization_servers"
CREATE INDEX "trustedauthorizationserver_issuer" ON "trusted_authorization_servers" ("issuer");
-- create index "trustedauthorizationserver_project_id_issuer" to table: "trusted_authorization_servers"
CREATE UNIQUE INDEX "trustedauthorizationserver_project_id_issuer" ON "trusted_authorization_servers" ("project_id", "issuer");
-- create "trusted_issuers" table
CREATE TABLE "trusted_issuers" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "issuer" character varying NOT NULL, "kind" character varying NOT NULL, "name" character varying NOT NULL, "jwks_uri" character varying NULL, "jwks" jsonb NULL, "audience" character varying NULL, "subject_claim" character varying NOT NULL DEFAULT 'sub', "subject_pattern" character varying NULL, "scopes" jsonb NOT NULL, "resources" jsonb NOT NULL, "trust_email" boolean NOT NULL DEFAULT false, "created_by" character varying NULL, PRIMARY KEY ("id"));
-- create index "trustedissuer_project_id_issuer" to table: "trusted_issuers"
CREATE UNIQUE INDEX "trustedissuer_project_id_issuer" ON "trusted_issuers" ("project_id", "issuer");
-- create "used_assertions" table
CREATE TABLE "used_assertions" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "issuer" character varying NOT NULL, "jti" character varying NOT NULL, "expires_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "usedassertion_expires_at" to table: "used_assertions"
CREATE INDEX "usedassertion_expires_at" ON "used_assertions" ("expires_at");
-- create index "usedassertion_issuer_jti" to table: "used_assertions"
CREATE UNIQUE INDEX "usedassertion_issuer_jti" ON "used_assertions" ("issuer", "jti");
-- create "vault_connections" table
CREATE TABLE "vault_connections" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "provider_id" character varying NOT NULL, "user_id" character varying NOT NULL, "agents" jsonb NOT NULL, "tokens_sealed" character varying NOT NULL, "access_expires_at" timestamptz NULL, "scope" character varying NOT NULL DEFAULT '', "version" bigint NOT NULL DEFAULT 0, "lease_until" timestamptz NULL, "lease_owner" character varying NOT NULL DEFAULT '', "last_refreshed_at" timestamptz NULL, "broken_at" timestamptz NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
CREATE UNIQUE INDEX "vaultconnection_provider_id_user_id" ON "vault_connections" ("provider_id", "user_id");
-- create index "vaultconnection_user_id" to table: "vault_connections"
CREATE INDEX "vaultconnection_user_id" ON "vault_connections" ("user_id");

-- +goose Down
-- reverse: create index "vaultconnection_user_id" to table: "vault_connections"
DROP INDEX "vaultconnection_user_id";
-- reverse: create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
DROP INDEX "vaultconnection_provider_id_user_id";
-- reverse: create "vault_connections" table
DROP TABLE "vault_connections";
-- reverse: create index "usedassertion_issuer_jti" to table: "used_assertions"
DROP INDEX "usedassertion_issuer_jti";
-- reverse: create index "usedassertion_expires_at" to table: "used_assertions"
DROP INDEX "usedassertion_expires_at";
-- reverse: create "used_assertions" table
DROP TABLE "used_assertions";
-- reverse: create index "trustedissuer_project_id_issuer" to table: "trusted_issuers"
DROP INDEX "trustedissuer_project_id_issuer";
-- reverse: create "trusted_issuers" table
DROP TABLE "trusted_issuers";
-- reverse: create index "trustedauthorizationserver_project_id_issuer" to table: "trusted_authorization_servers"
DROP INDEX "trustedauthorizationserver_project_id_issuer";
-- reverse: create index "trustedauthorizationserver_issuer" to table: "trusted_authorization_servers"
DROP INDEX "trustedauthorizationserver_issuer";
-- reverse: create "trusted_authorization_servers" table
DROP TABLE "trusted_authorization_servers";
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
-- reverse: create index "invitations_digest_key" to table: "invitations"
DROP INDEX "invitations_digest_key";
-- reverse: create index "invitation_project_id_email" to table: "invitations"
DROP INDEX "invitation_project_id_email";
-- reverse: create index "invitation_email_created_at" to table: "invitations"
DROP INDEX "invitation_email_created_at";
-- reverse: create "invitations" table
DROP TABLE "invitations";
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
-- reverse: create index "deploykey_project_id_id" to table: "deploy_keys"
DROP INDEX "deploykey_project_id_id";
-- reverse: create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
DROP INDEX "deploy_keys_previous_digest_key";
-- reverse: create index "deploy_keys_digest_key" to table: "deploy_keys"
DROP INDEX "deploy_keys_digest_key";
-- reverse: create "deploy_keys" table
DROP TABLE "deploy_keys";
-- reverse: create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_user_id_status";
-- reverse: create index "backchannelrequest_req_digest" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_req_digest";
-- reverse: create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_ping_next_at";
-- reverse: create index "backchannelrequest_expires_at" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_expires_at";
-- reverse: create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_client_id_user_id_status";
-- reverse: create "backchannel_requests" table
DROP TABLE "backchannel_requests";
-- reverse: create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
DROP INDEX "backchannelclient_project_id_client_id";
-- reverse: create "backchannel_clients" table
DROP TABLE "backchannel_clients";
-- reverse: create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
DROP INDEX "authorizationdetailtype_project_id_type";
-- reverse: create "authorization_detail_types" table
DROP TABLE "authorization_detail_types";
-- reverse: create index "resources_canonical_uri_key" to table: "resources"
DROP INDEX "resources_canonical_uri_key";
-- reverse: modify "resources" table
ALTER TABLE "resources" DROP COLUMN "canonical_uri";
-- reverse: modify "oauth_codes" table
ALTER TABLE "oauth_codes" DROP COLUMN "sid", DROP COLUMN "amr", DROP COLUMN "auth_time", DROP COLUMN "nonce";
-- reverse: modify "oauth_clients" table
ALTER TABLE "oauth_clients" DROP COLUMN "dpop_bound_access_tokens", DROP COLUMN "id_token_signed_response_alg", DROP COLUMN "scope", DROP COLUMN "post_logout_redirect_uris", DROP COLUMN "jwks_uri", DROP COLUMN "jwks", DROP COLUMN "secret_digest", DROP COLUMN "token_endpoint_auth_method", DROP COLUMN "last_used_at";
-- reverse: modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" DROP COLUMN "max_age", DROP COLUMN "prompt", DROP COLUMN "nonce", DROP COLUMN "session_handle", DROP COLUMN "browser", DROP COLUMN "client_uri";
-- reverse: modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" DROP COLUMN "sid", DROP COLUMN "amr", DROP COLUMN "auth_time", DROP COLUMN "jkt", DROP COLUMN "successor";
-- reverse: modify "auth_clients" table
ALTER TABLE "auth_clients" DROP COLUMN "scopes", DROP COLUMN "keys";
-- reverse: modify "agent_tokens" table
ALTER TABLE "agent_tokens" DROP COLUMN "dpop_jkt";
