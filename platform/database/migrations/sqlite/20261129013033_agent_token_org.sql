-- +goose Up
-- add column "org_id" to table: "agent_tokens"
ALTER TABLE `agent_tokens` ADD COLUMN `org_id` text NULL;

-- +goose Down
-- reverse: add column "org_id" to table: "agent_tokens"
ALTER TABLE `agent_tokens` DROP COLUMN `org_id`;
