-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_audit_events" table
CREATE TABLE `new_audit_events` (`id` text NOT NULL, `created_at` datetime NOT NULL, `actor_id` text NULL, `project_id` text NOT NULL, `action` text NOT NULL, `ip_hash` text NULL, `user_agent` text NULL, `metadata` json NOT NULL, `actor_type` text NULL, `act` json NULL, `org_id` text NULL, `request_id` text NULL, `chain_seq` integer NULL, `hash` text NULL, PRIMARY KEY (`id`));
-- copy rows from old table "audit_events" to new temporary table "new_audit_events"
INSERT INTO `new_audit_events` (`id`, `created_at`, `actor_id`, `project_id`, `action`, `ip_hash`, `user_agent`, `metadata`) SELECT `id`, `created_at`, `actor_id`, `project_id`, `action`, `ip_hash`, `user_agent`, `metadata` FROM `audit_events`;
-- drop "audit_events" table after copying rows
DROP TABLE `audit_events`;
-- rename temporary table "new_audit_events" to "audit_events"
ALTER TABLE `new_audit_events` RENAME TO `audit_events`;
-- create index "auditevent_project_id_id" to table: "audit_events"
CREATE INDEX `auditevent_project_id_id` ON `audit_events` (`project_id`, `id`);
-- create index "auditevent_project_id_chain_seq" to table: "audit_events"
CREATE UNIQUE INDEX `auditevent_project_id_chain_seq` ON `audit_events` (`project_id`, `chain_seq`);
-- create index "auditevent_unchained" to table: "audit_events"
CREATE INDEX `auditevent_unchained` ON `audit_events` (`id`) WHERE chain_seq IS NULL;
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "auditevent_unchained" to table: "audit_events"
DROP INDEX `auditevent_unchained`;
-- reverse: create index "auditevent_project_id_chain_seq" to table: "audit_events"
DROP INDEX `auditevent_project_id_chain_seq`;
-- reverse: create index "auditevent_project_id_id" to table: "audit_events"
DROP INDEX `auditevent_project_id_id`;
-- reverse: create "new_audit_events" table
DROP TABLE `new_audit_events`;
