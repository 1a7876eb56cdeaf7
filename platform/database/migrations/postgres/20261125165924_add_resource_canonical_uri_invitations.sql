-- +goose Up
-- modify "resources" table
ALTER TABLE "resources" ADD COLUMN "canonical_uri" character varying NULL;
-- create index "resources_canonical_uri_key" to table: "resources"
CREATE UNIQUE INDEX "resources_canonical_uri_key" ON "resources" ("canonical_uri");
-- create "invitations" table
CREATE TABLE "invitations" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "email" character varying NOT NULL, "role" character varying NOT NULL, "digest" bytea NOT NULL, "created_by" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "accepted_at" timestamptz NULL, "accepted_by" character varying NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "invitation_email_created_at" to table: "invitations"
CREATE INDEX "invitation_email_created_at" ON "invitations" ("email", "created_at");
-- create index "invitation_project_id_email" to table: "invitations"
CREATE INDEX "invitation_project_id_email" ON "invitations" ("project_id", "email");
-- create index "invitations_digest_key" to table: "invitations"
CREATE UNIQUE INDEX "invitations_digest_key" ON "invitations" ("digest");

-- +goose Down
-- reverse: create index "invitations_digest_key" to table: "invitations"
DROP INDEX "invitations_digest_key";
-- reverse: create index "invitation_project_id_email" to table: "invitations"
DROP INDEX "invitation_project_id_email";
-- reverse: create index "invitation_email_created_at" to table: "invitations"
DROP INDEX "invitation_email_created_at";
-- reverse: create "invitations" table
DROP TABLE "invitations";
-- reverse: create index "resources_canonical_uri_key" to table: "resources"
DROP INDEX "resources_canonical_uri_key";
-- reverse: modify "resources" table
ALTER TABLE "resources" DROP COLUMN "canonical_uri";
