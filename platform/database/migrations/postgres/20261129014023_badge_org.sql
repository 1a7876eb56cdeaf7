-- +goose Up
-- modify "badges" table
ALTER TABLE "badges" ADD COLUMN "org_id" character varying NULL;

-- +goose Down
-- reverse: modify "badges" table
ALTER TABLE "badges" DROP COLUMN "org_id";
