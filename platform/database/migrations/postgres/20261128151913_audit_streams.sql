-- +goose Up
-- create "audit_streams" table
CREATE TABLE "audit_streams" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "type" character varying NOT NULL, "format" character varying NOT NULL, "actions" jsonb NOT NULL, "url" character varying NULL, "secret_sealed" character varying NULL, "host" character varying NULL, "port" bigint NULL, "tls" boolean NOT NULL DEFAULT false, "endpoint" character varying NULL, "region" character varying NULL, "bucket" character varying NULL, "prefix" character varying NULL, "access_key_id" character varying NULL, "secret_access_key_sealed" character varying NULL, "path_style" boolean NOT NULL DEFAULT false, "cursor" bigint NOT NULL DEFAULT 0, "generation" bigint NOT NULL DEFAULT 0, "last_delivered_id" character varying NULL, "last_error" character varying NULL, "failing_since" timestamptz NULL, "failures" bigint NOT NULL DEFAULT 0, "next_attempt_at" timestamptz NULL, "paused_at" timestamptz NULL, "locked_until" timestamptz NULL, "created_by" character varying NULL, PRIMARY KEY ("id"));
-- create index "auditstream_project_id_id" to table: "audit_streams"
CREATE INDEX "auditstream_project_id_id" ON "audit_streams" ("project_id", "id");

-- +goose Down
-- reverse: create index "auditstream_project_id_id" to table: "audit_streams"
DROP INDEX "auditstream_project_id_id";
-- reverse: create "audit_streams" table
DROP TABLE "audit_streams";
