-- +goose Up
-- add column "org_id" to table: "sign_in_providers"
ALTER TABLE `sign_in_providers` ADD COLUMN `org_id` text NULL;

-- +goose Down
-- reverse: add column "org_id" to table: "sign_in_providers"
ALTER TABLE `sign_in_providers` DROP COLUMN `org_id`;
