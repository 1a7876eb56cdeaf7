-- +goose Up
-- add column "org_id" to table: "agent_tokens"
ALTER TABLE `agent_tokens` ADD COLUMN `org_id` text NULL;
-- add column "org_id" to table: "badges"
ALTER TABLE `badges` ADD COLUMN `org_id` text NULL;
-- create "org_invitations" table
CREATE TABLE `org_invitations` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `org_id` text NOT NULL, `email` text NOT NULL, `role` text NOT NULL, `digest` blob NOT NULL, `created_by` text NOT NULL, `expires_at` datetime NOT NULL, `accepted_at` datetime NULL, `accepted_by` text NULL, `revoked_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "org_invitations_digest_key" to table: "org_invitations"
CREATE UNIQUE INDEX `org_invitations_digest_key` ON `org_invitations` (`digest`);
-- create index "orginvitation_org_id_email" to table: "org_invitations"
CREATE INDEX `orginvitation_org_id_email` ON `org_invitations` (`org_id`, `email`);
-- create index "orginvitation_project_id_created_at" to table: "org_invitations"
CREATE INDEX `orginvitation_project_id_created_at` ON `org_invitations` (`project_id`, `created_at`);
-- create index "orginvitation_email_created_at" to table: "org_invitations"
CREATE INDEX `orginvitation_email_created_at` ON `org_invitations` (`email`, `created_at`);

-- +goose Down
-- reverse: create index "orginvitation_email_created_at" to table: "org_invitations"
DROP INDEX `orginvitation_email_created_at`;
-- reverse: create index "orginvitation_project_id_created_at" to table: "org_invitations"
DROP INDEX `orginvitation_project_id_created_at`;
-- reverse: create index "orginvitation_org_id_email" to table: "org_invitations"
DROP INDEX `orginvitation_org_id_email`;
-- reverse: create index "org_invitations_digest_key" to table: "org_invitations"
DROP INDEX `org_invitations_digest_key`;
-- reverse: create "org_invitations" table
DROP TABLE `org_invitations`;
-- reverse: add column "org_id" to table: "badges"
ALTER TABLE `badges` DROP COLUMN `org_id`;
-- reverse: add column "org_id" to table: "agent_tokens"
ALTER TABLE `agent_tokens` DROP COLUMN `org_id`;
