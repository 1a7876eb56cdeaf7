-- +goose Up
-- create "deploy_keys" table
CREATE TABLE "deploy_keys" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "created_by" character varying NULL, "expires_at" timestamptz NULL, "digest" bytea NOT NULL, "previous_digest" bytea NULL, "previous_expires_at" timestamptz NULL, "revoked_at" timestamptz NULL, "last_used_at" timestamptz NULL, "secret_hint" character varying NOT NULL, "name" character varying NOT NULL, "repository" character varying NULL, PRIMARY KEY ("id"));
-- create index "deploy_keys_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX "deploy_keys_digest_key" ON "deploy_keys" ("digest");
-- create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
CREATE UNIQUE INDEX "deploy_keys_previous_digest_key" ON "deploy_keys" ("previous_digest");
-- create index "deploykey_project_id_id" to table: "deploy_keys"
CREATE INDEX "deploykey_project_id_id" ON "deploy_keys" ("project_id", "id");

-- +goose Down
-- reverse: create index "deploykey_project_id_id" to table: "deploy_keys"
DROP INDEX "deploykey_project_id_id";
-- reverse: create index "deploy_keys_previous_digest_key" to table: "deploy_keys"
DROP INDEX "deploy_keys_previous_digest_key";
-- reverse: create index "deploy_keys_digest_key" to table: "deploy_keys"
DROP INDEX "deploy_keys_digest_key";
-- reverse: create "deploy_keys" table
DROP TABLE "deploy_keys";
