-- +goose Up
-- create "device_authorizations" table
CREATE TABLE "device_authorizations" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "device_code_digest" bytea NOT NULL, "user_code_digest" bytea NOT NULL, "client_id" character varying NOT NULL, "client_name" character varying NOT NULL, "scopes" jsonb NOT NULL, "resources" jsonb NOT NULL, "project_id" character varying NOT NULL, "tenant_id" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "interval" bigint NOT NULL, "last_polled_at" timestamptz NULL, "status" character varying NOT NULL DEFAULT 'pending', "grant_id" character varying NULL, "user_id" character varying NULL, "sid" character varying NULL, "auth_time" timestamptz NULL, "amr" jsonb NULL, PRIMARY KEY ("id"));
-- create index "device_authorizations_device_code_digest_key" to table: "device_authorizations"
CREATE UNIQUE INDEX "device_authorizations_device_code_digest_key" ON "device_authorizations" ("device_code_digest");
-- create index "device_authorizations_user_code_digest_key" to table: "device_authorizations"
CREATE UNIQUE INDEX "device_authorizations_user_code_digest_key" ON "device_authorizations" ("user_code_digest");
-- create index "deviceauthorization_expires_at" to table: "device_authorizations"
CREATE INDEX "deviceauthorization_expires_at" ON "device_authorizations" ("expires_at");

-- +goose Down
-- reverse: create index "deviceauthorization_expires_at" to table: "device_authorizations"
DROP INDEX "deviceauthorization_expires_at";
-- reverse: create index "device_authorizations_user_code_digest_key" to table: "device_authorizations"
DROP INDEX "device_authorizations_user_code_digest_key";
-- reverse: create index "device_authorizations_device_code_digest_key" to table: "device_authorizations"
DROP INDEX "device_authorizations_device_code_digest_key";
-- reverse: create "device_authorizations" table
DROP TABLE "device_authorizations";
