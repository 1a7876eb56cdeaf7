-- +goose Up
-- create "audit_events" table
CREATE TABLE "audit_events" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "actor_id" character varying NULL, "project_id" character varying NOT NULL, "action" character varying NOT NULL, "ip_hash" character varying NULL, "user_agent" character varying NULL, "metadata" jsonb NOT NULL, PRIMARY KEY ("id"));
-- create index "auditevent_project_id_id" to table: "audit_events"
CREATE INDEX "auditevent_project_id_id" ON "audit_events" ("project_id", "id");

-- +goose Down
-- reverse: create index "auditevent_project_id_id" to table: "audit_events"
DROP INDEX "auditevent_project_id_id";
-- reverse: create "audit_events" table
DROP TABLE "audit_events";
