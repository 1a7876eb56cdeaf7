-- +goose Up
-- create "events" table
CREATE TABLE `events` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `type` text NOT NULL, `body` blob NOT NULL, PRIMARY KEY (`id`));
-- create index "event_project_id_id" to table: "events"
CREATE INDEX `event_project_id_id` ON `events` (`project_id`, `id`);
-- create "webhooks" table
CREATE TABLE `webhooks` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `url` text NOT NULL, `events` json NOT NULL, `secret_sealed` text NOT NULL, `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "webhook_project_id_id" to table: "webhooks"
CREATE INDEX `webhook_project_id_id` ON `webhooks` (`project_id`, `id`);
-- create "webhook_deliveries" table
CREATE TABLE `webhook_deliveries` (`id` text NOT NULL, `created_at` datetime NOT NULL, `webhook_id` text NOT NULL, `event_id` text NOT NULL, `event_type` text NOT NULL, `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NOT NULL, `locked_until` datetime NULL, `last_status_code` integer NULL, `last_error` text NULL, `last_attempt_at` datetime NULL, `delivered_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "webhookdelivery_webhook_id_status_id" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_webhook_id_status_id` ON `webhook_deliveries` (`webhook_id`, `status`, `id`);
-- create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_status_next_attempt_at` ON `webhook_deliveries` (`status`, `next_attempt_at`);

-- +goose Down
-- reverse: create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
DROP INDEX `webhookdelivery_status_next_attempt_at`;
-- reverse: create index "webhookdelivery_webhook_id_status_id" to table: "webhook_deliveries"
DROP INDEX `webhookdelivery_webhook_id_status_id`;
-- reverse: create "webhook_deliveries" table
DROP TABLE `webhook_deliveries`;
-- reverse: create index "webhook_project_id_id" to table: "webhooks"
DROP INDEX `webhook_project_id_id`;
-- reverse: create "webhooks" table
DROP TABLE `webhooks`;
-- reverse: create index "event_project_id_id" to table: "events"
DROP INDEX `event_project_id_id`;
-- reverse: create "events" table
DROP TABLE `events`;
