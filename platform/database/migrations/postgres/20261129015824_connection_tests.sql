-- +goose Up
-- modify "federation_flows" table
ALTER TABLE "federation_flows" ADD COLUMN "test_result" jsonb NULL;

-- +goose Down
-- reverse: modify "federation_flows" table
ALTER TABLE "federation_flows" DROP COLUMN "test_result";
