-- +goose Up
-- modify "projects" table
ALTER TABLE "projects" ADD COLUMN "require_mfa" boolean NOT NULL DEFAULT false;
-- modify "sessions" table
ALTER TABLE "sessions" ADD COLUMN "amr" jsonb NULL, ADD COLUMN "auth_time" timestamptz NULL;
-- create "mfa_challenges" table
CREATE TABLE "mfa_challenges" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "purpose" character varying NOT NULL, "tenant_id" character varying NOT NULL, "user_id" character varying NULL, "digest" bytea NULL, "data" character varying NOT NULL DEFAULT '', "expires_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "mfa_challenges_digest_key" to table: "mfa_challenges"
CREATE UNIQUE INDEX "mfa_challenges_digest_key" ON "mfa_challenges" ("digest");
-- create index "mfachallenge_expires_at" to table: "mfa_challenges"
CREATE INDEX "mfachallenge_expires_at" ON "mfa_challenges" ("expires_at");
-- create "mfa_factors" table
CREATE TABLE "mfa_factors" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "user_id" character varying NOT NULL, "tenant_id" character varying NOT NULL, "type" character varying NOT NULL, "name" character varying NOT NULL DEFAULT '', "secret_sealed" character varying NULL, "confirmed_at" timestamptz NULL, "last_step" bigint NOT NULL DEFAULT 0, "credential_id" bytea NULL, "credential" character varying NULL, "last_used_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "mfa_factors_credential_id_key" to table: "mfa_factors"
CREATE UNIQUE INDEX "mfa_factors_credential_id_key" ON "mfa_factors" ("credential_id");
-- create index "mfafactor_user_id" to table: "mfa_factors"
CREATE INDEX "mfafactor_user_id" ON "mfa_factors" ("user_id");
-- create "mfa_recovery_codes" table
CREATE TABLE "mfa_recovery_codes" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "user_id" character varying NOT NULL, "digest" bytea NOT NULL, "used_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "mfarecoverycode_user_id_digest" to table: "mfa_recovery_codes"
CREATE UNIQUE INDEX "mfarecoverycode_user_id_digest" ON "mfa_recovery_codes" ("user_id", "digest");

-- +goose Down
-- reverse: create index "mfarecoverycode_user_id_digest" to table: "mfa_recovery_codes"
DROP INDEX "mfarecoverycode_user_id_digest";
-- reverse: create "mfa_recovery_codes" table
DROP TABLE "mfa_recovery_codes";
-- reverse: create index "mfafactor_user_id" to table: "mfa_factors"
DROP INDEX "mfafactor_user_id";
-- reverse: create index "mfa_factors_credential_id_key" to table: "mfa_factors"
DROP INDEX "mfa_factors_credential_id_key";
-- reverse: create "mfa_factors" table
DROP TABLE "mfa_factors";
-- reverse: create index "mfachallenge_expires_at" to table: "mfa_challenges"
DROP INDEX "mfachallenge_expires_at";
-- reverse: create index "mfa_challenges_digest_key" to table: "mfa_challenges"
DROP INDEX "mfa_challenges_digest_key";
-- reverse: create "mfa_challenges" table
DROP TABLE "mfa_challenges";
-- reverse: modify "sessions" table
ALTER TABLE "sessions" DROP COLUMN "auth_time", DROP COLUMN "amr";
-- reverse: modify "projects" table
ALTER TABLE "projects" DROP COLUMN "require_mfa";
