-- +goose Up
-- create "registration_tokens" table
CREATE TABLE "registration_tokens" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "digest" bytea NOT NULL, "hint" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "max_uses" bigint NOT NULL, "uses" bigint NOT NULL DEFAULT 0, "created_by" character varying NULL, PRIMARY KEY ("id"));
-- create index "registration_tokens_digest_key" to table: "registration_tokens"
CREATE UNIQUE INDEX "registration_tokens_digest_key" ON "registration_tokens" ("digest");
-- create index "registrationtoken_project_id_id" to table: "registration_tokens"
CREATE INDEX "registrationtoken_project_id_id" ON "registration_tokens" ("project_id", "id");

-- +goose Down
-- reverse: create index "registrationtoken_project_id_id" to table: "registration_tokens"
DROP INDEX "registrationtoken_project_id_id";
-- reverse: create index "registration_tokens_digest_key" to table: "registration_tokens"
DROP INDEX "registration_tokens_digest_key";
-- reverse: create "registration_tokens" table
DROP TABLE "registration_tokens";
