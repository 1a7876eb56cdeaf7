-- +goose Up
-- modify "oauth_clients" table
ALTER TABLE "oauth_clients" ADD COLUMN "project_id" character varying NULL, ADD COLUMN "app_type" character varying NULL, ADD COLUMN "first_party" boolean NOT NULL DEFAULT false, ADD COLUMN "backchannel_logout_uri" character varying NULL, ADD COLUMN "frontchannel_logout_uri" character varying NULL, ADD COLUMN "claims" jsonb NULL, ADD COLUMN "previous_secret_digest" bytea NULL, ADD COLUMN "previous_secret_expires_at" timestamptz NULL;
-- create index "oauthclient_project_id" to table: "oauth_clients"
CREATE INDEX "oauthclient_project_id" ON "oauth_clients" ("project_id");

-- +goose Down
-- reverse: create index "oauthclient_project_id" to table: "oauth_clients"
DROP INDEX "oauthclient_project_id";
-- reverse: modify "oauth_clients" table
ALTER TABLE "oauth_clients" DROP COLUMN "previous_secret_expires_at", DROP COLUMN "previous_secret_digest", DROP COLUMN "claims", DROP COLUMN "frontchannel_logout_uri", DROP COLUMN "backchannel_logout_uri", DROP COLUMN "first_party", DROP COLUMN "app_type", DROP COLUMN "project_id";
