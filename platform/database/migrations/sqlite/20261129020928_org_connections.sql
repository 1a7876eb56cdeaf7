-- +goose Up
-- add column "test_result" to table: "federation_flows"
ALTER TABLE `federation_flows` ADD COLUMN `test_result` json NULL;
-- add column "org_id" to table: "sign_in_providers"
ALTER TABLE `sign_in_providers` ADD COLUMN `org_id` text NULL;

-- +goose Down
-- reverse: add column "org_id" to table: "sign_in_providers"
ALTER TABLE `sign_in_providers` DROP COLUMN `org_id`;
-- reverse: add column "test_result" to table: "federation_flows"
ALTER TABLE `federation_flows` DROP COLUMN `test_result`;
