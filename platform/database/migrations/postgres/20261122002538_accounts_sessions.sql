-- +goose Up
-- create "refresh_tokens" table
CREATE TABLE "refresh_tokens" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "digest" bytea NOT NULL, "session_id" character varying NOT NULL, "rotated_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "refresh_tokens_digest_key" to table: "refresh_tokens"
CREATE UNIQUE INDEX "refresh_tokens_digest_key" ON "refresh_tokens" ("digest");
-- create index "refreshtoken_session_id" to table: "refresh_tokens"
CREATE INDEX "refreshtoken_session_id" ON "refresh_tokens" ("session_id");
-- create "sessions" table
CREATE TABLE "sessions" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "user_id" character varying NOT NULL, "tenant_id" character varying NOT NULL, "payload" jsonb NOT NULL, "user_agent" character varying NULL, "ip_hash" character varying NULL, "last_active_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "session_created_at" to table: "sessions"
CREATE INDEX "session_created_at" ON "sessions" ("created_at");
-- create index "session_tenant_id_created_at" to table: "sessions"
CREATE INDEX "session_tenant_id_created_at" ON "sessions" ("tenant_id", "created_at");
-- create index "session_user_id" to table: "sessions"
CREATE INDEX "session_user_id" ON "sessions" ("user_id");
-- create "signing_keys" table
CREATE TABLE "signing_keys" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "algorithm" character varying NOT NULL DEFAULT 'EdDSA', "public_key" bytea NOT NULL, "private_sealed" character varying NOT NULL, "retire_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create "users" table
CREATE TABLE "users" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "tenant_id" character varying NOT NULL, "email" character varying NOT NULL, "password_hash" character varying NOT NULL, "metadata" text NOT NULL DEFAULT '{}', PRIMARY KEY ("id"));
-- create index "user_tenant_id_email" to table: "users"
CREATE UNIQUE INDEX "user_tenant_id_email" ON "users" ("tenant_id", "email");

-- +goose Down
-- reverse: create index "user_tenant_id_email" to table: "users"
DROP INDEX "user_tenant_id_email";
-- reverse: create "users" table
DROP TABLE "users";
-- reverse: create "signing_keys" table
DROP TABLE "signing_keys";
-- reverse: create index "session_user_id" to table: "sessions"
DROP INDEX "session_user_id";
-- reverse: create index "session_tenant_id_created_at" to table: "sessions"
DROP INDEX "session_tenant_id_created_at";
-- reverse: create index "session_created_at" to table: "sessions"
DROP INDEX "session_created_at";
-- reverse: create "sessions" table
DROP TABLE "sessions";
-- reverse: create index "refreshtoken_session_id" to table: "refresh_tokens"
DROP INDEX "refreshtoken_session_id";
-- reverse: create index "refresh_tokens_digest_key" to table: "refresh_tokens"
DROP INDEX "refresh_tokens_digest_key";
-- reverse: create "refresh_tokens" table
DROP TABLE "refresh_tokens";
