-- +goose Up
-- create "resources" table
CREATE TABLE `resources` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `uri` text NOT NULL, `name` text NOT NULL, `scopes` json NOT NULL, `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "resources_uri_key" to table: "resources"
CREATE UNIQUE INDEX `resources_uri_key` ON `resources` (`uri`);
-- create index "resource_project_id_id" to table: "resources"
CREATE INDEX `resource_project_id_id` ON `resources` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "resource_project_id_id" to table: "resources"
DROP INDEX `resource_project_id_id`;
-- reverse: create index "resources_uri_key" to table: "resources"
DROP INDEX `resources_uri_key`;
-- reverse: create "resources" table
DROP TABLE `resources`;
