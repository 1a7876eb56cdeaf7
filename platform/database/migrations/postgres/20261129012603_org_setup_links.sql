-- +goose Up
-- create "org_setup_links" table
CREATE TABLE "org_setup_links" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "org_id" character varying NOT NULL, "intents" jsonb NOT NULL, "digest" bytea NOT NULL, "expires_at" timestamptz NOT NULL, "created_by" character varying NULL, "opened_at" timestamptz NULL, "session_digest" bytea NULL, "session_expires_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "org_setup_links_digest_key" to table: "org_setup_links"
CREATE UNIQUE INDEX "org_setup_links_digest_key" ON "org_setup_links" ("digest");
-- create index "org_setup_links_session_digest_key" to table: "org_setup_links"
CREATE UNIQUE INDEX "org_setup_links_session_digest_key" ON "org_setup_links" ("session_digest");
-- create index "orgsetuplink_expires_at" to table: "org_setup_links"
CREATE INDEX "orgsetuplink_expires_at" ON "org_setup_links" ("expires_at");
-- create index "orgsetuplink_org_id" to table: "org_setup_links"
CREATE INDEX "orgsetuplink_org_id" ON "org_setup_links" ("org_id");

-- +goose Down
-- reverse: create index "orgsetuplink_org_id" to table: "org_setup_links"
DROP INDEX "orgsetuplink_org_id";
-- reverse: create index "orgsetuplink_expires_at" to table: "org_setup_links"
DROP INDEX "orgsetuplink_expires_at";
-- reverse: create index "org_setup_links_session_digest_key" to table: "org_setup_links"
DROP INDEX "org_setup_links_session_digest_key";
-- reverse: create index "org_setup_links_digest_key" to table: "org_setup_links"
DROP INDEX "org_setup_links_digest_key";
-- reverse: create "org_setup_links" table
DROP TABLE "org_setup_links";
