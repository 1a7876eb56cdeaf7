-- +goose Up
-- modify "projects" table
ALTER TABLE "projects" ADD COLUMN "agent_token_max_ttl_hours" bigint NULL, ADD COLUMN "badge_max_expires_in_days" bigint NULL, ADD COLUMN "allowed_scopes" jsonb NULL;

-- +goose Down
-- reverse: modify "projects" table
ALTER TABLE "projects" DROP COLUMN "allowed_scopes", DROP COLUMN "badge_max_expires_in_days", DROP COLUMN "agent_token_max_ttl_hours";
