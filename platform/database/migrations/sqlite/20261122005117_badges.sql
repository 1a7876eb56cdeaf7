-- +goose Up
-- create "badges" table
CREATE TABLE `badges` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `product` text NOT NULL, `name` text NOT NULL, `role` text NOT NULL, `created_by` text NULL, `expires_at` datetime NULL, `last_used_at` datetime NULL, `secret_hint` text NOT NULL, `digest` blob NOT NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "badges_digest_key" to table: "badges"
CREATE UNIQUE INDEX `badges_digest_key` ON `badges` (`digest`);
-- create index "badge_project_id_id" to table: "badges"
CREATE INDEX `badge_project_id_id` ON `badges` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "badge_project_id_id" to table: "badges"
DROP INDEX `badge_project_id_id`;
-- reverse: create index "badges_digest_key" to table: "badges"
DROP INDEX `badges_digest_key`;
-- reverse: create "badges" table
DROP TABLE `badges`;
