-- +goose Up
-- create "events" table
CREATE TABLE "events" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "type" character varying NOT NULL, "body" bytea NOT NULL, PRIMARY KEY ("id"));
-- create index "event_project_id_id" to table: "events"
CREATE INDEX "event_project_id_id" ON "events" ("project_id", "id");
-- create "webhooks" table
CREATE TABLE "webhooks" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "url" character varying NOT NULL, "events" jsonb NOT NULL, "secret_sealed" character varying NOT NULL, "created_by" character varying NULL, PRIMARY KEY ("id"));
-- create index "webhook_project_id_id" to table: "webhooks"
CREATE INDEX "webhook_project_id_id" ON "webhooks" ("project_id", "id");
-- create "webhook_deliveries" table
CREATE TABLE "webhook_deliveries" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "webhook_id" character varying NOT NULL, "event_id" character varying NOT NULL, "event_type" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'pending', "attempts" bigint NOT NULL DEFAULT 0, "next_attempt_at" timestamptz NOT NULL, "locked_until" timestamptz NULL, "last_status_code" bigint NULL, "last_error" character varying NULL, "last_attempt_at" timestamptz NULL, "delivered_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_status_next_attempt_at" ON "webhook_deliveries" ("status", "next_attempt_at");
-- create index "webhookdelivery_webhook_id_status_id" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_webhook_id_status_id" ON "webhook_deliveries" ("webhook_id", "status", "id");

-- +goose Down
-- reverse: create index "webhookdelivery_webhook_id_status_id" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_webhook_id_status_id";
-- reverse: create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_status_next_attempt_at";
-- reverse: create "webhook_deliveries" table
DROP TABLE "webhook_deliveries";
-- reverse: create index "webhook_project_id_id" to table: "webhooks"
DROP INDEX "webhook_project_id_id";
-- reverse: create "webhooks" table
DROP TABLE "webhooks";
-- reverse: create index "event_project_id_id" to table: "events"
DROP INDEX "event_project_id_id";
-- reverse: create "events" table
DROP TABLE "events";
