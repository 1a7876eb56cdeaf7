-- +goose Up
-- create "usage_counts" table
CREATE TABLE `usage_counts` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `project_id` text NOT NULL, `kind` text NOT NULL, `credential_id` text NOT NULL, `resolution` text NOT NULL, `bucket` datetime NOT NULL, `outcome` text NOT NULL, `count` integer NOT NULL);
-- create index "usagecount_project_id_kind_cred_b3d944f36c454bf4172caa5265485952" to table: "usage_counts"
CREATE UNIQUE INDEX `usagecount_project_id_kind_cred_b3d944f36c454bf4172caa5265485952` ON `usage_counts` (`project_id`, `kind`, `credential_id`, `resolution`, `bucket`, `outcome`);
-- create index "usagecount_project_id_resolution_bucket" to table: "usage_counts"
CREATE INDEX `usagecount_project_id_resolution_bucket` ON `usage_counts` (`project_id`, `resolution`, `bucket`);

-- +goose Down
-- reverse: create index "usagecount_project_id_resolution_bucket" to table: "usage_counts"
DROP INDEX `usagecount_project_id_resolution_bucket`;
-- reverse: create index "usagecount_project_id_kind_cred_b3d944f36c454bf4172caa5265485952" to table: "usage_counts"
DROP INDEX `usagecount_project_id_kind_cred_b3d944f36c454bf4172caa5265485952`;
-- reverse: create "usage_counts" table
DROP TABLE `usage_counts`;
