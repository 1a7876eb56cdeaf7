-- +goose Up
-- modify "auth_clients" table
ALTER TABLE "auth_clients" ADD COLUMN "keys" jsonb NULL, ADD COLUMN "scopes" jsonb NULL;
-- modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" ADD COLUMN "successor" character varying NULL, ADD COLUMN "auth_time" timestamptz NULL, ADD COLUMN "amr" jsonb NULL, ADD COLUMN "sid" character varying NULL;
-- modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" ADD COLUMN "client_uri" character varying NULL, ADD COLUMN "browser" bytea NULL, ADD COLUMN "session_handle" character varying NULL, ADD COLUMN "nonce" character varying NULL, ADD COLUMN "prompt" character varying NULL, ADD COLUMN "max_age" bigint NULL;
-- modify "oauth_clients" table
ALTER TABLE "oauth_clients" ADD COLUMN "last_used_at" timestamptz NULL, ADD COLUMN "token_endpoint_auth_method" character varying NOT NULL DEFAULT 'none', ADD COLUMN "secret_digest" bytea NULL, ADD COLUMN "jwks" jsonb NULL, ADD COLUMN "jwks_uri" character varying NULL, ADD COLUMN "post_logout_redirect_uris" jsonb NULL, ADD COLUMN "scope" character varying NULL, ADD COLUMN "id_token_signed_response_alg" character varying NULL;
-- modify "oauth_codes" table
ALTER TABLE "oauth_codes" ADD COLUMN "nonce" character varying NULL, ADD COLUMN "auth_time" timestamptz NULL, ADD COLUMN "amr" jsonb NULL, ADD COLUMN "sid" character varying NULL;
-- modify "resources" table
ALTER TABLE "resources" ADD COLUMN "canonical_uri" character varying NULL;
-- create index "resources_canonical_uri_key" to table: "resources"
CREATE UNIQUE INDEX "resources_canonical_uri_key" ON "resources" ("canonical_uri");
-- create "invitations" table
CREATE TABLE "invitations" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "email" character varying NOT NULL, "role" character varying NOT NULL, "digest" bytea NOT NULL, "created_by" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "accepted_at" timestamptz NULL, "accepted_by" character varying NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "invitation_email_created_at" to table: "invitations"
CREATE INDEX "invitation_email_created_at" ON "invitations" ("email", "created_at");
-- create index "invitation_project_id_email" to table: "invitations"
CREATE INDEX "invitation_project_id_email" ON "invitations" ("project_id", "email");
-- create index "invitations_digest_key" to table: "invitations"
CREATE UNIQUE INDEX "invitations_digest_key" ON "invitations" ("digest");
-- create "used_assertions" table
CREATE TABLE "used_assertions" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "issuer" character varying NOT NULL, "jti" character varying NOT NULL, "expires_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "usedassertion_expires_at" to table: "used_assertions"
CREATE INDEX "usedassertion_expires_at" ON "used_assertions" ("expires_at");
-- create index "usedassertion_issuer_jti" to table: "used_assertions"
CREATE UNIQUE INDEX "usedassertion_issuer_jti" ON "used_assertions" ("issuer", "jti");

-- +goose Down
-- reverse: create index "usedassertion_issuer_jti" to table: "used_assertions"
DROP INDEX "usedassertion_issuer_jti";
-- reverse: create index "usedassertion_expires_at" to table: "used_assertions"
DROP INDEX "usedassertion_expires_at";
-- reverse: create "used_assertions" table
DROP TABLE "used_assertions";
-- reverse: create index "invitations_digest_key" to table: "invitations"
DROP INDEX "invitations_digest_key";
-- reverse: create index "invitation_project_id_email" to table: "invitations"
DROP INDEX "invitation_project_id_email";
-- reverse: create index "invitation_email_created_at" to table: "invitations"
DROP INDEX "invitation_email_created_at";
-- reverse: create "invitations" table
DROP TABLE "invitations";
-- reverse: create index "resources_canonical_uri_key" to table: "resources"
DROP INDEX "resources_canonical_uri_key";
-- reverse: modify "resources" table
ALTER TABLE "resources" DROP COLUMN "canonical_uri";
-- reverse: modify "oauth_codes" table
ALTER TABLE "oauth_codes" DROP COLUMN "sid", DROP COLUMN "amr", DROP COLUMN "auth_time", DROP COLUMN "nonce";
-- reverse: modify "oauth_clients" table
ALTER TABLE "oauth_clients" DROP COLUMN "id_token_signed_response_alg", DROP COLUMN "scope", DROP COLUMN "post_logout_redirect_uris", DROP COLUMN "jwks_uri", DROP COLUMN "jwks", DROP COLUMN "secret_digest", DROP COLUMN "token_endpoint_auth_method", DROP COLUMN "last_used_at";
-- reverse: modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" DROP COLUMN "max_age", DROP COLUMN "prompt", DROP COLUMN "nonce", DROP COLUMN "session_handle", DROP COLUMN "browser", DROP COLUMN "client_uri";
-- reverse: modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" DROP COLUMN "sid", DROP COLUMN "amr", DROP COLUMN "auth_time", DROP COLUMN "successor";
-- reverse: modify "auth_clients" table
ALTER TABLE "auth_clients" DROP COLUMN "scopes", DROP COLUMN "keys";
