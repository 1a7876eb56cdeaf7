-- +goose Up
-- modify "agent_tokens" table
ALTER TABLE "agent_tokens" ADD COLUMN "previous_digest" bytea NULL, ADD COLUMN "previous_expires_at" timestamptz NULL;
-- create index "agent_tokens_previous_digest_key" to table: "agent_tokens"
CREATE UNIQUE INDEX "agent_tokens_previous_digest_key" ON "agent_tokens" ("previous_digest");
-- modify "auth_clients" table
ALTER TABLE "auth_clients" ADD COLUMN "previous_secret_digest" bytea NULL, ADD COLUMN "previous_expires_at" timestamptz NULL;
-- create index "auth_clients_previous_secret_digest_key" to table: "auth_clients"
CREATE UNIQUE INDEX "auth_clients_previous_secret_digest_key" ON "auth_clients" ("previous_secret_digest");
-- modify "badges" table
ALTER TABLE "badges" ADD COLUMN "previous_digest" bytea NULL, ADD COLUMN "previous_expires_at" timestamptz NULL;
-- create index "badges_previous_digest_key" to table: "badges"
CREATE UNIQUE INDEX "badges_previous_digest_key" ON "badges" ("previous_digest");
-- modify "s3credentials" table
ALTER TABLE "s3credentials" ADD COLUMN "previous_access_key_id" character varying NULL, ADD COLUMN "previous_secret_sealed" character varying NULL, ADD COLUMN "previous_expires_at" timestamptz NULL;
-- create index "s3credentials_previous_access_key_id_key" to table: "s3credentials"
CREATE UNIQUE INDEX "s3credentials_previous_access_key_id_key" ON "s3credentials" ("previous_access_key_id");

-- +goose Down
-- reverse: create index "s3credentials_previous_access_key_id_key" to table: "s3credentials"
DROP INDEX "s3credentials_previous_access_key_id_key";
-- reverse: modify "s3credentials" table
ALTER TABLE "s3credentials" DROP COLUMN "previous_expires_at", DROP COLUMN "previous_secret_sealed", DROP COLUMN "previous_access_key_id";
-- reverse: create index "badges_previous_digest_key" to table: "badges"
DROP INDEX "badges_previous_digest_key";
-- reverse: modify "badges" table
ALTER TABLE "badges" DROP COLUMN "previous_expires_at", DROP COLUMN "previous_digest";
-- reverse: create index "auth_clients_previous_secret_digest_key" to table: "auth_clients"
DROP INDEX "auth_clients_previous_secret_digest_key";
-- reverse: modify "auth_clients" table
ALTER TABLE "auth_clients" DROP COLUMN "previous_expires_at", DROP COLUMN "previous_secret_digest";
-- reverse: create index "agent_tokens_previous_digest_key" to table: "agent_tokens"
DROP INDEX "agent_tokens_previous_digest_key";
-- reverse: modify "agent_tokens" table
ALTER TABLE "agent_tokens" DROP COLUMN "previous_expires_at", DROP COLUMN "previous_digest";
