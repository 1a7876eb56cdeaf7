-- +goose Up
-- create "memberships" table
CREATE TABLE "memberships" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "user_id" character varying NOT NULL, "role" character varying NOT NULL, PRIMARY KEY ("id"));
-- create index "membership_project_id_user_id" to table: "memberships"
CREATE UNIQUE INDEX "membership_project_id_user_id" ON "memberships" ("project_id", "user_id");
-- create index "membership_user_id" to table: "memberships"
CREATE INDEX "membership_user_id" ON "memberships" ("user_id");
-- create "projects" table
CREATE TABLE "projects" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "name" character varying NOT NULL, "created_by" character varying NOT NULL, PRIMARY KEY ("id"));

-- +goose Down
-- reverse: create "projects" table
DROP TABLE "projects";
-- reverse: create index "membership_user_id" to table: "memberships"
DROP INDEX "membership_user_id";
-- reverse: create index "membership_project_id_user_id" to table: "memberships"
DROP INDEX "membership_project_id_user_id";
-- reverse: create "memberships" table
DROP TABLE "memberships";
