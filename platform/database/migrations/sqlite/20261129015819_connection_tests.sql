-- +goose Up
-- add column "test_result" to table: "federation_flows"
ALTER TABLE `federation_flows` ADD COLUMN `test_result` json NULL;

-- +goose Down
-- reverse: add column "test_result" to table: "federation_flows"
ALTER TABLE `federation_flows` DROP COLUMN `test_result`;
