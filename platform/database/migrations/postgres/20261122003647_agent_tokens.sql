-- +goose Up
-- create "agent_tokens" table
CREATE TABLE "agent_tokens" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "agent_name" character varying NOT NULL, "scopes" jsonb NOT NULL, "created_by" character varying NULL, "expires_at" timestamptz NOT NULL, "last_used_at" timestamptz NULL, "token_hint" character varying NOT NULL, "digest" bytea NOT NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "agent_tokens_digest_key" to table: "agent_tokens"
CREATE UNIQUE INDEX "agent_tokens_digest_key" ON "agent_tokens" ("digest");
-- create index "agenttoken_project_id_id" to table: "agent_tokens"
CREATE INDEX "agenttoken_project_id_id" ON "agent_tokens" ("project_id", "id");

-- +goose Down
-- reverse: create index "agenttoken_project_id_id" to table: "agent_tokens"
DROP INDEX "agenttoken_project_id_id";
-- reverse: create index "agent_tokens_digest_key" to table: "agent_tokens"
DROP INDEX "agent_tokens_digest_key";
-- reverse: create "agent_tokens" table
DROP TABLE "agent_tokens";
