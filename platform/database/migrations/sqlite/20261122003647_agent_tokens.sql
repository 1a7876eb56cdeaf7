-- +goose Up
-- create "agent_tokens" table
CREATE TABLE `agent_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `agent_name` text NOT NULL, `scopes` json NOT NULL, `created_by` text NULL, `expires_at` datetime NOT NULL, `last_used_at` datetime NULL, `token_hint` text NOT NULL, `digest` blob NOT NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "agent_tokens_digest_key" to table: "agent_tokens"
CREATE UNIQUE INDEX `agent_tokens_digest_key` ON `agent_tokens` (`digest`);
-- create index "agenttoken_project_id_id" to table: "agent_tokens"
CREATE INDEX `agenttoken_project_id_id` ON `agent_tokens` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "agenttoken_project_id_id" to table: "agent_tokens"
DROP INDEX `agenttoken_project_id_id`;
-- reverse: create index "agent_tokens_digest_key" to table: "agent_tokens"
DROP INDEX `agent_tokens_digest_key`;
-- reverse: create "agent_tokens" table
DROP TABLE `agent_tokens`;
