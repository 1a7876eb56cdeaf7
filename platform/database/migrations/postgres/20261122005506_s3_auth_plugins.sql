-- +goose Up
-- create "auth_clients" table
CREATE TABLE "auth_clients" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "badge_id" character varying NOT NULL, "project_id" character varying NOT NULL, "secret_digest" bytea NOT NULL, "role" character varying NOT NULL, "expires_at" timestamptz NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "auth_clients_badge_id_key" to table: "auth_clients"
CREATE UNIQUE INDEX "auth_clients_badge_id_key" ON "auth_clients" ("badge_id");
-- create index "auth_clients_secret_digest_key" to table: "auth_clients"
CREATE UNIQUE INDEX "auth_clients_secret_digest_key" ON "auth_clients" ("secret_digest");
-- create "s3credentials" table
CREATE TABLE "s3credentials" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "badge_id" character varying NOT NULL, "project_id" character varying NOT NULL, "access_key_id" character varying NOT NULL, "secret_sealed" character varying NOT NULL, "bucket" character varying NOT NULL, "role" character varying NOT NULL, "expires_at" timestamptz NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "s3credentials_access_key_id_key" to table: "s3credentials"
CREATE UNIQUE INDEX "s3credentials_access_key_id_key" ON "s3credentials" ("access_key_id");
-- create index "s3credentials_badge_id_key" to table: "s3credentials"
CREATE UNIQUE INDEX "s3credentials_badge_id_key" ON "s3credentials" ("badge_id");

-- +goose Down
-- reverse: create index "s3credentials_badge_id_key" to table: "s3credentials"
DROP INDEX "s3credentials_badge_id_key";
-- reverse: create index "s3credentials_access_key_id_key" to table: "s3credentials"
DROP INDEX "s3credentials_access_key_id_key";
-- reverse: create "s3credentials" table
DROP TABLE "s3credentials";
-- reverse: create index "auth_clients_secret_digest_key" to table: "auth_clients"
DROP INDEX "auth_clients_secret_digest_key";
-- reverse: create index "auth_clients_badge_id_key" to table: "auth_clients"
DROP INDEX "auth_clients_badge_id_key";
-- reverse: create "auth_clients" table
DROP TABLE "auth_clients";
