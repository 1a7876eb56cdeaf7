-- +goose Up
-- add column "agent_token_max_ttl_hours" to table: "projects"
ALTER TABLE `projects` ADD COLUMN `agent_token_max_ttl_hours` integer NULL;
-- add column "badge_max_expires_in_days" to table: "projects"
ALTER TABLE `projects` ADD COLUMN `badge_max_expires_in_days` integer NULL;
-- add column "allowed_scopes" to table: "projects"
ALTER TABLE `projects` ADD COLUMN `allowed_scopes` json NULL;

-- +goose Down
-- reverse: add column "allowed_scopes" to table: "projects"
ALTER TABLE `projects` DROP COLUMN `allowed_scopes`;
-- reverse: add column "badge_max_expires_in_days" to table: "projects"
ALTER TABLE `projects` DROP COLUMN `badge_max_expires_in_days`;
-- reverse: add column "agent_token_max_ttl_hours" to table: "projects"
ALTER TABLE `projects` DROP COLUMN `agent_token_max_ttl_hours`;
