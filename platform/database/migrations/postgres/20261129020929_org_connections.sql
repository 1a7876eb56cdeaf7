-- +goose Up
-- modify "federation_flows" table
ALTER TABLE "federation_flows" ADD COLUMN "test_result" jsonb NULL;
-- modify "sign_in_providers" table
ALTER TABLE "sign_in_providers" ADD COLUMN "org_id" character varying NULL;

-- +goose Down
-- reverse: modify "sign_in_providers" table
ALTER TABLE "sign_in_providers" DROP COLUMN "org_id";
-- reverse: modify "federation_flows" table
ALTER TABLE "federation_flows" DROP COLUMN "test_result";
