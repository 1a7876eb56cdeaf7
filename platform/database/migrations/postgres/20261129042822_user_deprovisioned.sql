-- +goose Up
-- modify "users" table
ALTER TABLE "users" ADD COLUMN "deprovisioned_at" timestamptz NULL;

-- +goose Down
-- reverse: modify "users" table
ALTER TABLE "users" DROP COLUMN "deprovisioned_at";
