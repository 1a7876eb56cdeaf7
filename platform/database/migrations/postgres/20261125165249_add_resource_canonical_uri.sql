-- +goose Up
-- modify "resources" table
ALTER TABLE "resources" ADD COLUMN "canonical_uri" character varying NULL;
-- create index "resources_canonical_uri_key" to table: "resources"
CREATE UNIQUE INDEX "resources_canonical_uri_key" ON "resources" ("canonical_uri");

-- +goose Down
-- reverse: create index "resources_canonical_uri_key" to table: "resources"
DROP INDEX "resources_canonical_uri_key";
-- reverse: modify "resources" table
ALTER TABLE "resources" DROP COLUMN "canonical_uri";
