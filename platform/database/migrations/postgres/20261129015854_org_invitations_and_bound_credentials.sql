-- +goose Up
-- modify "agent_tokens" table
ALTER TABLE "agent_tokens" ADD COLUMN "org_id" character varying NULL;
-- modify "badges" table
ALTER TABLE "badges" ADD COLUMN "org_id" character varying NULL;
-- create "org_invitations" table
CREATE TABLE "org_invitations" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "org_id" character varying NOT NULL, "email" character varying NOT NULL, "role" character varying NOT NULL, "digest" bytea NOT NULL, "created_by" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "accepted_at" timestamptz NULL, "accepted_by" character varying NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "org_invitations_digest_key" to table: "org_invitations"
CREATE UNIQUE INDEX "org_invitations_digest_key" ON "org_invitations" ("digest");
-- create index "orginvitation_email_created_at" to table: "org_invitations"
CREATE INDEX "orginvitation_email_created_at" ON "org_invitations" ("email", "created_at");
-- create index "orginvitation_org_id_email" to table: "org_invitations"
CREATE INDEX "orginvitation_org_id_email" ON "org_invitations" ("org_id", "email");
-- create index "orginvitation_project_id_created_at" to table: "org_invitations"
CREATE INDEX "orginvitation_project_id_created_at" ON "org_invitations" ("project_id", "created_at");

-- +goose Down
-- reverse: create index "orginvitation_project_id_created_at" to table: "org_invitations"
DROP INDEX "orginvitation_project_id_created_at";
-- reverse: create index "orginvitation_org_id_email" to table: "org_invitations"
DROP INDEX "orginvitation_org_id_email";
-- reverse: create index "orginvitation_email_created_at" to table: "org_invitations"
DROP INDEX "orginvitation_email_created_at";
-- reverse: create index "org_invitations_digest_key" to table: "org_invitations"
DROP INDEX "org_invitations_digest_key";
-- reverse: create "org_invitations" table
DROP TABLE "org_invitations";
-- reverse: modify "badges" table
ALTER TABLE "badges" DROP COLUMN "org_id";
-- reverse: modify "agent_tokens" table
ALTER TABLE "agent_tokens" DROP COLUMN "org_id";
