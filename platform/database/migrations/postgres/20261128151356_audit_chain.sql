-- +goose Up
-- modify "audit_events" table
ALTER TABLE "audit_events" ADD COLUMN "actor_type" character varying NULL, ADD COLUMN "act" jsonb NULL, ADD COLUMN "org_id" character varying NULL, ADD COLUMN "request_id" character varying NULL, ADD COLUMN "chain_seq" bigint NULL, ADD COLUMN "hash" character varying NULL;
-- create index "auditevent_project_id_chain_seq" to table: "audit_events"
CREATE UNIQUE INDEX "auditevent_project_id_chain_seq" ON "audit_events" ("project_id", "chain_seq");
-- create index "auditevent_unchained" to table: "audit_events"
CREATE INDEX "auditevent_unchained" ON "audit_events" ("id") WHERE (chain_seq IS NULL);

-- +goose Down
-- reverse: create index "auditevent_unchained" to table: "audit_events"
DROP INDEX "auditevent_unchained";
-- reverse: create index "auditevent_project_id_chain_seq" to table: "audit_events"
DROP INDEX "auditevent_project_id_chain_seq";
-- reverse: modify "audit_events" table
ALTER TABLE "audit_events" DROP COLUMN "hash", DROP COLUMN "chain_seq", DROP COLUMN "request_id", DROP COLUMN "org_id", DROP COLUMN "act", DROP COLUMN "actor_type";
