-- +goose Up
-- create index "orginvitation_email_created_at" to table: "org_invitations"
CREATE INDEX `orginvitation_email_created_at` ON `org_invitations` (`email`, `created_at`);

-- +goose Down
-- reverse: create index "orginvitation_email_created_at" to table: "org_invitations"
DROP INDEX `orginvitation_email_created_at`;
