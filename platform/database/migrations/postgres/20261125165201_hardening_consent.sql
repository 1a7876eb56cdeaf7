-- +goose Up
-- modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" ADD COLUMN "successor" character varying NULL;
-- modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" ADD COLUMN "client_uri" character varying NULL, ADD COLUMN "browser" bytea NULL, ADD COLUMN "session_handle" character varying NULL;
-- modify "oauth_clients" table
ALTER TABLE "oauth_clients" ADD COLUMN "last_used_at" timestamptz NULL;

-- +goose Down
-- reverse: modify "oauth_clients" table
ALTER TABLE "oauth_clients" DROP COLUMN "last_used_at";
-- reverse: modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" DROP COLUMN "session_handle", DROP COLUMN "browser", DROP COLUMN "client_uri";
-- reverse: modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" DROP COLUMN "successor";
