-- +goose Up
-- create "app_sessions" table
CREATE TABLE "app_sessions" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "sid" character varying NOT NULL, "client_id" character varying NOT NULL, "user_id" character varying NOT NULL, "project_id" character varying NOT NULL, PRIMARY KEY ("id"));
-- create index "appsession_client_id" to table: "app_sessions"
CREATE INDEX "appsession_client_id" ON "app_sessions" ("client_id");
-- create index "appsession_sid_client_id" to table: "app_sessions"
CREATE UNIQUE INDEX "appsession_sid_client_id" ON "app_sessions" ("sid", "client_id");
-- create "logout_deliveries" table
CREATE TABLE "logout_deliveries" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "sid" character varying NOT NULL, "user_id" character varying NOT NULL, "client_id" character varying NOT NULL, "project_id" character varying NOT NULL, "url" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'pending', "attempts" bigint NOT NULL DEFAULT 0, "next_attempt_at" timestamptz NOT NULL, "locked_until" timestamptz NULL, "last_attempt_at" timestamptz NULL, "last_status_code" bigint NULL, "last_error" character varying NULL, "delivered_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "logoutdelivery_client_id_id" to table: "logout_deliveries"
CREATE INDEX "logoutdelivery_client_id_id" ON "logout_deliveries" ("client_id", "id");
-- create index "logoutdelivery_created_at" to table: "logout_deliveries"
CREATE INDEX "logoutdelivery_created_at" ON "logout_deliveries" ("created_at");
-- create index "logoutdelivery_status_next_attempt_at" to table: "logout_deliveries"
CREATE INDEX "logoutdelivery_status_next_attempt_at" ON "logout_deliveries" ("status", "next_attempt_at");
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
-- reverse: create index "logoutdelivery_status_next_attempt_at" to table: "logout_deliveries"
DROP INDEX "logoutdelivery_status_next_attempt_at";
-- reverse: create index "logoutdelivery_created_at" to table: "logout_deliveries"
DROP INDEX "logoutdelivery_created_at";
-- reverse: create index "logoutdelivery_client_id_id" to table: "logout_deliveries"
DROP INDEX "logoutdelivery_client_id_id";
-- reverse: create "logout_deliveries" table
DROP TABLE "logout_deliveries";
-- reverse: create index "appsession_sid_client_id" to table: "app_sessions"
DROP INDEX "appsession_sid_client_id";
-- reverse: create index "appsession_client_id" to table: "app_sessions"
DROP INDEX "appsession_client_id";
-- reverse: create "app_sessions" table
DROP TABLE "app_sessions";
