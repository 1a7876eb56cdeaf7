-- +goose Up
-- modify "sign_in_providers" table
ALTER TABLE "sign_in_providers" ADD COLUMN "org_id" character varying NULL;

-- +goose Down
-- reverse: modify "sign_in_providers" table
ALTER TABLE "sign_in_providers" DROP COLUMN "org_id";
