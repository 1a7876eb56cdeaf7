-- +goose Up
-- create "org_setup_links" table
CREATE TABLE `org_setup_links` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `org_id` text NOT NULL, `intents` json NOT NULL, `digest` blob NOT NULL, `expires_at` datetime NOT NULL, `created_by` text NULL, `opened_at` datetime NULL, `session_digest` blob NULL, `session_expires_at` datetime NULL, PRIMARY KEY (`id`));
-- create index "org_setup_links_digest_key" to table: "org_setup_links"
CREATE UNIQUE INDEX `org_setup_links_digest_key` ON `org_setup_links` (`digest`);
-- create index "org_setup_links_session_digest_key" to table: "org_setup_links"
CREATE UNIQUE INDEX `org_setup_links_session_digest_key` ON `org_setup_links` (`session_digest`);
-- create index "orgsetuplink_org_id" to table: "org_setup_links"
CREATE INDEX `orgsetuplink_org_id` ON `org_setup_links` (`org_id`);
-- create index "orgsetuplink_expires_at" to table: "org_setup_links"
CREATE INDEX `orgsetuplink_expires_at` ON `org_setup_links` (`expires_at`);

-- +goose Down
-- reverse: create index "orgsetuplink_expires_at" to table: "org_setup_links"
DROP INDEX `orgsetuplink_expires_at`;
-- reverse: create index "orgsetuplink_org_id" to table: "org_setup_links"
DROP INDEX `orgsetuplink_org_id`;
-- reverse: create index "org_setup_links_session_digest_key" to table: "org_setup_links"
DROP INDEX `org_setup_links_session_digest_key`;
-- reverse: create index "org_setup_links_digest_key" to table: "org_setup_links"
DROP INDEX `org_setup_links_digest_key`;
-- reverse: create "org_setup_links" table
DROP TABLE `org_setup_links`;
