-- +goose Up
-- add column "blocked_at" to table: "users"
ALTER TABLE `users` ADD COLUMN `blocked_at` datetime NULL;

-- +goose Down
-- reverse: add column "blocked_at" to table: "users"
ALTER TABLE `users` DROP COLUMN `blocked_at`;
