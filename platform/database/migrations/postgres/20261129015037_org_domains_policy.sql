-- +goose Up
-- create "org_domains" table
CREATE TABLE "org_domains" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "org_id" character varying NOT NULL, "domain" character varying NOT NULL, "method" character varying NOT NULL, "email" character varying NULL, "code_mac" character varying NULL, "attempts" bigint NOT NULL DEFAULT 0, "dns_token" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "verified_at" timestamptz NULL, PRIMARY KEY ("id"));
-- create index "orgdomain_org_id_domain" to table: "org_domains"
CREATE UNIQUE INDEX "orgdomain_org_id_domain" ON "org_domains" ("org_id", "domain");
-- create index "orgdomain_verified" to table: "org_domains"
CREATE UNIQUE INDEX "orgdomain_verified" ON "org_domains" ("project_id", "domain") WHERE (verified_at IS NOT NULL);
-- create "org_policies" table
CREATE TABLE "org_policies" ("id" character varying NOT NULL, "project_id" character varying NOT NULL, "sso_required" boolean NOT NULL DEFAULT false, "mfa_required" boolean NOT NULL DEFAULT false, "session_max_hours" bigint NOT NULL DEFAULT 0, "auto_join_role" character varying NULL, "revoke_minted_on_deprovision" boolean NOT NULL DEFAULT false, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "orgpolicy_project_id_auto_join_role" to table: "org_policies"
CREATE INDEX "orgpolicy_project_id_auto_join_role" ON "org_policies" ("project_id", "auto_join_role");

-- +goose Down
-- reverse: create index "orgpolicy_project_id_auto_join_role" to table: "org_policies"
DROP INDEX "orgpolicy_project_id_auto_join_role";
-- reverse: create "org_policies" table
DROP TABLE "org_policies";
-- reverse: create index "orgdomain_verified" to table: "org_domains"
DROP INDEX "orgdomain_verified";
-- reverse: create index "orgdomain_org_id_domain" to table: "org_domains"
DROP INDEX "orgdomain_org_id_domain";
-- reverse: create "org_domains" table
DROP TABLE "org_domains";
