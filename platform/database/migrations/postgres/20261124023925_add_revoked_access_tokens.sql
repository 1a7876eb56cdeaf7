-- +goose Up
-- create "revoked_access_tokens" table
CREATE TABLE "revoked_access_tokens" ("id" character varying NOT NULL, "project_id" character varying NOT NULL, "expires_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "revokedaccesstoken_expires_at" to table: "revoked_access_tokens"
CREATE INDEX "revokedaccesstoken_expires_at" ON "revoked_access_tokens" ("expires_at");

-- +goose Down
-- reverse: create index "revokedaccesstoken_expires_at" to table: "revoked_access_tokens"
DROP INDEX "revokedaccesstoken_expires_at";
-- reverse: create "revoked_access_tokens" table
DROP TABLE "revoked_access_tokens";
