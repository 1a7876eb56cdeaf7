-- +goose Up
-- create "badges" table
CREATE TABLE "badges" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "product" character varying NOT NULL, "name" character varying NOT NULL, "role" character varying NOT NULL, "created_by" character varying NULL, "expires_at" timestamptz NULL, "last_used_at" timestamptz NULL, "secret_hint" character varying NOT NULL, "digest" bytea NOT NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "badge_project_id_id" to table: "badges"
CREATE INDEX "badge_project_id_id" ON "badges" ("project_id", "id");
-- create index "badges_digest_key" to table: "badges"
CREATE UNIQUE INDEX "badges_digest_key" ON "badges" ("digest");

-- +goose Down
-- reverse: create index "badges_digest_key" to table: "badges"
DROP INDEX "badges_digest_key";
-- reverse: create index "badge_project_id_id" to table: "badges"
DROP INDEX "badge_project_id_id";
-- reverse: create "badges" table
DROP TABLE "badges";
