-- +goose Up
-- create "resources" table
CREATE TABLE "resources" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "uri" character varying NOT NULL, "name" character varying NOT NULL, "scopes" jsonb NOT NULL, "created_by" character varying NULL, PRIMARY KEY ("id"));
-- create index "resource_project_id_id" to table: "resources"
CREATE INDEX "resource_project_id_id" ON "resources" ("project_id", "id");
-- create index "resources_uri_key" to table: "resources"
CREATE UNIQUE INDEX "resources_uri_key" ON "resources" ("uri");

-- +goose Down
-- reverse: create index "resources_uri_key" to table: "resources"
DROP INDEX "resources_uri_key";
-- reverse: create index "resource_project_id_id" to table: "resources"
DROP INDEX "resource_project_id_id";
-- reverse: create "resources" table
DROP TABLE "resources";
