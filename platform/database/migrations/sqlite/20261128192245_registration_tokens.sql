-- +goose Up
-- create "registration_tokens" table
CREATE TABLE `registration_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `digest` blob NOT NULL, `hint` text NOT NULL, `expires_at` datetime NOT NULL, `max_uses` integer NOT NULL, `uses` integer NOT NULL DEFAULT (0), `created_by` text NULL, PRIMARY KEY (`id`));
-- create index "registration_tokens_digest_key" to table: "registration_tokens"
CREATE UNIQUE INDEX `registration_tokens_digest_key` ON `registration_tokens` (`digest`);
-- create index "registrationtoken_project_id_id" to table: "registration_tokens"
CREATE INDEX `registrationtoken_project_id_id` ON `registration_tokens` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "registrationtoken_project_id_id" to table: "registration_tokens"
DROP INDEX `registrationtoken_project_id_id`;
-- reverse: create index "registration_tokens_digest_key" to table: "registration_tokens"
DROP INDEX `registration_tokens_digest_key`;
-- reverse: create "registration_tokens" table
DROP TABLE `registration_tokens`;
