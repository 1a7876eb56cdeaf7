-- +goose Up
-- add column "org_id" to table: "badges"
ALTER TABLE `badges` ADD COLUMN `org_id` text NULL;

-- +goose Down
-- reverse: add column "org_id" to table: "badges"
ALTER TABLE `badges` DROP COLUMN `org_id`;
