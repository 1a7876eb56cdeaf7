-- +goose Up
-- modify "users" table
ALTER TABLE "users" ADD COLUMN "blocked_at" timestamptz NULL;

-- +goose Down
-- reverse: modify "users" table
ALTER TABLE "users" DROP COLUMN "blocked_at";
