-- +goose Up
-- create "audit_streams" table
CREATE TABLE `audit_streams` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `type` text NOT NULL, `format` text NOT NULL, `actions` json NOT NULL, `url` text NULL, `secret_sealed` text NULL, `host` text NULL, `port` integer NULL, `tls` bool NOT NULL DEFAULT (false), `endpoint` text NULL, `region` text NULL, `bucket` text NULL, `prefix` text NULL, `access_key_id` text NULL, `secret_access_key_sealed` text NULL, `path_style` bool NOT NULL DEFAULT (false), `cursor` integer NOT NULL DEFAULT (0), `generation` integer NOT NULL DEFAULT (0), `last_delivered_id` text NULL, `last_error` text NULL, `failing_since` datetime NULL, `failures` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `paused_at` datetime NULL, `locked_until` datetime NULL, `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "auditstream_project_id_id" to table: "audit_streams"
CREATE INDEX `auditstream_project_id_id` ON `audit_streams` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "auditstream_project_id_id" to table: "audit_streams"
DROP INDEX `auditstream_project_id_id`;
-- reverse: create "audit_streams" table
DROP TABLE `audit_streams`;
