-- +goose Up
-- create "audit_events" table
CREATE TABLE `audit_events` (`id` text NOT NULL, `created_at` datetime NOT NULL, `actor_id` text NULL, `project_id` text NOT NULL, `action` text NOT NULL, `ip_hash` text NULL, `user_agent` text NULL, `metadata` json NOT NULL, PRIMARY KEY (`id`));
-- create index "auditevent_project_id_id" to table: "audit_events"
CREATE INDEX `auditevent_project_id_id` ON `audit_events` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "auditevent_project_id_id" to table: "audit_events"
DROP INDEX `auditevent_project_id_id`;
-- reverse: create "audit_events" table
DROP TABLE `audit_events`;
