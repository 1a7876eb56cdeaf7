-- +goose Up
-- create "orgs" table
CREATE TABLE "orgs" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "name" character varying NOT NULL, "slug" character varying NOT NULL, PRIMARY KEY ("id"));
-- create index "org_project_id_slug" to table: "orgs"
CREATE UNIQUE INDEX "org_project_id_slug" ON "orgs" ("project_id", "slug");
-- create "org_members" table
CREATE TABLE "org_members" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "org_id" character varying NOT NULL, "user_id" character varying NOT NULL, "role" character varying NOT NULL, PRIMARY KEY ("id"));
-- create index "orgmember_org_id_user_id" to table: "org_members"
CREATE UNIQUE INDEX "orgmember_org_id_user_id" ON "org_members" ("org_id", "user_id");
-- create index "orgmember_project_id_user_id" to table: "org_members"
CREATE INDEX "orgmember_project_id_user_id" ON "org_members" ("project_id", "user_id");
-- create "org_roles" table
CREATE TABLE "org_roles" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "name" character varying NOT NULL, "permissions" jsonb NOT NULL, PRIMARY KEY ("id"));
-- create index "orgrole_project_id_name" to table: "org_roles"
CREATE UNIQUE INDEX "orgrole_project_id_name" ON "org_roles" ("project_id", "name");

-- +goose Down
-- reverse: create index "orgrole_project_id_name" to table: "org_roles"
DROP INDEX "orgrole_project_id_name";
-- reverse: create "org_roles" table
DROP TABLE "org_roles";
-- reverse: create index "orgmember_project_id_user_id" to table: "org_members"
DROP INDEX "orgmember_project_id_user_id";
-- reverse: create index "orgmember_org_id_user_id" to table: "org_members"
DROP INDEX "orgmember_org_id_user_id";
-- reverse: create "org_members" table
DROP TABLE "org_members";
-- reverse: create index "org_project_id_slug" to table: "orgs"
DROP INDEX "org_project_id_slug";
-- reverse: create "orgs" table
DROP TABLE "orgs";
