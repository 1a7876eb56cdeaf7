-- +goose Up
-- add column "deprovisioned_at" to table: "users"
ALTER TABLE `users` ADD COLUMN `deprovisioned_at` datetime NULL;

-- +goose Down
-- reverse: add column "deprovisioned_at" to table: "users"
ALTER TABLE `users` DROP COLUMN `deprovisioned_at`;
