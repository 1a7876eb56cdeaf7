-- +goose Up
-- modify "users" table
ALTER TABLE "users" ADD COLUMN "email_verified" boolean NOT NULL DEFAULT false;
-- create "user_tokens" table
CREATE TABLE "user_tokens" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "user_id" character varying NOT NULL, "purpose" character varying NOT NULL, "digest" bytea NOT NULL, "expires_at" timestamptz NOT NULL, "used_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "user_tokens_digest_key" to table: "user_tokens"
CREATE UNIQUE INDEX "user_tokens_digest_key" ON "user_tokens" ("digest");
-- create index "usertoken_user_id_purpose_created_at" to table: "user_tokens"
CREATE INDEX "usertoken_user_id_purpose_created_at" ON "user_tokens" ("user_id", "purpose", "created_at");

-- +goose Down
-- reverse: create index "usertoken_user_id_purpose_created_at" to table: "user_tokens"
DROP INDEX "usertoken_user_id_purpose_created_at";
-- reverse: create index "user_tokens_digest_key" to table: "user_tokens"
DROP INDEX "user_tokens_digest_key";
-- reverse: create "user_tokens" table
DROP TABLE "user_tokens";
-- reverse: modify "users" table
ALTER TABLE "users" DROP COLUMN "email_verified";
