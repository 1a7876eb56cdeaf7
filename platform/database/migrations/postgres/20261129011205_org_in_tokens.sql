-- +goose Up
-- modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" ADD COLUMN "org_id" character varying NULL;
-- modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" ADD COLUMN "org_id" character varying NULL;
-- modify "oauth_codes" table
ALTER TABLE "oauth_codes" ADD COLUMN "org_id" character varying NULL;
-- modify "sessions" table
ALTER TABLE "sessions" ADD COLUMN "org_id" character varying NULL;

-- +goose Down
-- reverse: modify "sessions" table
ALTER TABLE "sessions" DROP COLUMN "org_id";
-- reverse: modify "oauth_codes" table
ALTER TABLE "oauth_codes" DROP COLUMN "org_id";
-- reverse: modify "oauth_authorizations" table
ALTER TABLE "oauth_authorizations" DROP COLUMN "org_id";
-- reverse: modify "grant_refresh_tokens" table
ALTER TABLE "grant_refresh_tokens" DROP COLUMN "org_id";
