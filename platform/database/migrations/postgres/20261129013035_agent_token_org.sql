-- +goose Up
-- modify "agent_tokens" table
ALTER TABLE "agent_tokens" ADD COLUMN "org_id" character varying NULL;

-- +goose Down
-- reverse: modify "agent_tokens" table
ALTER TABLE "agent_tokens" DROP COLUMN "org_id";
