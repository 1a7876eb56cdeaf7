-- +goose Up
-- create "authorization_detail_types" table
CREATE TABLE `authorization_detail_types` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `type` text NOT NULL, `name` text NOT NULL, `schema` text NOT NULL, `schema_digest` text NOT NULL, `created_by` text NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
CREATE UNIQUE INDEX `authorizationdetailtype_project_id_type` ON `authorization_detail_types` (`project_id`, `type`);
-- create "backchannel_clients" table
CREATE TABLE `backchannel_clients` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `client_id` text NOT NULL, `delivery_mode` text NOT NULL, `notification_endpoint` text NOT NULL DEFAULT (''), `secret_sealed` text NOT NULL DEFAULT (''), `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
CREATE UNIQUE INDEX `backchannelclient_project_id_client_id` ON `backchannel_clients` (`project_id`, `client_id`);
-- create "backchannel_requests" table
CREATE TABLE `backchannel_requests` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `client_id` text NOT NULL, `client_name` text NOT NULL DEFAULT (''), `user_id` text NOT NULL, `req_digest` blob NOT NULL, `scopes` json NOT NULL, `audience` json NOT NULL, `binding_message` text NOT NULL DEFAULT (''), `authorization_details` text NOT NULL, `type_digests` json NOT NULL, `details_digest` text NOT NULL, `status` text NOT NULL, `interval` integer NOT NULL, `expires_at` datetime NOT NULL, `last_polled_at` datetime NULL, `decided_at` datetime NULL, `auth_time` datetime NULL, `delivery_mode` text NOT NULL, `ping_sealed` text NOT NULL DEFAULT (''), `ping_next_at` datetime NULL, `ping_locked_until` datetime NULL, `ping_attempts` integer NOT NULL DEFAULT (0), `ping_delivered_at` datetime NULL, `ping_last_error` text NOT NULL DEFAULT (''), PRIMARY KEY (`id`));
-- create index "backchannelrequest_req_digest" to table: "backchannel_requests"
CREATE UNIQUE INDEX `backchannelrequest_req_digest` ON `backchannel_requests` (`req_digest`);
-- create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_user_id_status` ON `backchannel_requests` (`user_id`, `status`);
-- create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_client_id_user_id_status` ON `backchannel_requests` (`client_id`, `user_id`, `status`);
-- create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_ping_next_at` ON `backchannel_requests` (`ping_next_at`);
-- create index "backchannelrequest_expires_at" to table: "backchannel_requests"
CREATE INDEX `backchannelrequest_expires_at` ON `backchannel_requests` (`expires_at`);
-- create "vault_connections" table
CREATE TABLE `vault_connections` (`id` text NOT NULL, `created_at` datetime NOT NULL, `project_id` text NOT NULL, `provider_id` text NOT NULL, `user_id` text NOT NULL, `agents` json NOT NULL, `tokens_sealed` text NOT NULL, `access_expires_at` datetime NULL, `scope` text NOT NULL DEFAULT (''), `version` integer NOT NULL DEFAULT (0), `lease_until` datetime NULL, `lease_owner` text NOT NULL DEFAULT (''), `last_refreshed_at` datetime NULL, `broken_at` datetime NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
CREATE UNIQUE INDEX `vaultconnection_provider_id_user_id` ON `vault_connections` (`provider_id`, `user_id`);
-- create index "vaultconnection_user_id" to table: "vault_connections"
CREATE INDEX `vaultconnection_user_id` ON `vault_connections` (`user_id`);

-- +goose Down
-- reverse: create index "vaultconnection_user_id" to table: "vault_connections"
DROP INDEX `vaultconnection_user_id`;
-- reverse: create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
DROP INDEX `vaultconnection_provider_id_user_id`;
-- reverse: create "vault_connections" table
DROP TABLE `vault_connections`;
-- reverse: create index "backchannelrequest_expires_at" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_expires_at`;
-- reverse: create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_ping_next_at`;
-- reverse: create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_client_id_user_id_status`;
-- reverse: create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_user_id_status`;
-- reverse: create index "backchannelrequest_req_digest" to table: "backchannel_requests"
DROP INDEX `backchannelrequest_req_digest`;
-- reverse: create "backchannel_requests" table
DROP TABLE `backchannel_requests`;
-- reverse: create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
DROP INDEX `backchannelclient_project_id_client_id`;
-- reverse: create "backchannel_clients" table
DROP TABLE `backchannel_clients`;
-- reverse: create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
DROP INDEX `authorizationdetailtype_project_id_type`;
-- reverse: create "authorization_detail_types" table
DROP TABLE `authorization_detail_types`;
