-- +goose Up
-- create "authorization_detail_types" table
CREATE TABLE "authorization_detail_types" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "type" character varying NOT NULL, "name" character varying NOT NULL, "schema" text NOT NULL, "schema_digest" character varying NOT NULL, "created_by" character varying NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
CREATE UNIQUE INDEX "authorizationdetailtype_project_id_type" ON "authorization_detail_types" ("project_id", "type");
-- create "backchannel_clients" table
CREATE TABLE "backchannel_clients" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "client_id" character varying NOT NULL, "delivery_mode" character varying NOT NULL, "notification_endpoint" character varying NOT NULL DEFAULT '', "secret_sealed" character varying NOT NULL DEFAULT '', "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
CREATE UNIQUE INDEX "backchannelclient_project_id_client_id" ON "backchannel_clients" ("project_id", "client_id");
-- create "backchannel_requests" table
CREATE TABLE "backchannel_requests" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "client_id" character varying NOT NULL, "client_name" character varying NOT NULL DEFAULT '', "user_id" character varying NOT NULL, "req_digest" bytea NOT NULL, "scopes" jsonb NOT NULL, "audience" jsonb NOT NULL, "binding_message" character varying NOT NULL DEFAULT '', "authorization_details" text NOT NULL, "type_digests" jsonb NOT NULL, "details_digest" character varying NOT NULL, "status" character varying NOT NULL, "interval" bigint NOT NULL, "expires_at" timestamptz NOT NULL, "last_polled_at" timestamptz NULL, "decided_at" timestamptz NULL, "auth_time" timestamptz NULL, "delivery_mode" character varying NOT NULL, "ping_sealed" character varying NOT NULL DEFAULT '', "ping_next_at" timestamptz NULL, "ping_locked_until" timestamptz NULL, "ping_attempts" bigint NOT NULL DEFAULT 0, "ping_delivered_at" timestamptz NULL, "ping_last_error" character varying NOT NULL DEFAULT '', PRIMARY KEY ("id"));
-- create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_client_id_user_id_status" ON "backchannel_requests" ("client_id", "user_id", "status");
-- create index "backchannelrequest_expires_at" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_expires_at" ON "backchannel_requests" ("expires_at");
-- create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_ping_next_at" ON "backchannel_requests" ("ping_next_at");
-- create index "backchannelrequest_req_digest" to table: "backchannel_requests"
CREATE UNIQUE INDEX "backchannelrequest_req_digest" ON "backchannel_requests" ("req_digest");
-- create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
CREATE INDEX "backchannelrequest_user_id_status" ON "backchannel_requests" ("user_id", "status");
-- create "vault_connections" table
CREATE TABLE "vault_connections" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "project_id" character varying NOT NULL, "provider_id" character varying NOT NULL, "user_id" character varying NOT NULL, "agents" jsonb NOT NULL, "tokens_sealed" character varying NOT NULL, "access_expires_at" timestamptz NULL, "scope" character varying NOT NULL DEFAULT '', "version" bigint NOT NULL DEFAULT 0, "lease_until" timestamptz NULL, "lease_owner" character varying NOT NULL DEFAULT '', "last_refreshed_at" timestamptz NULL, "broken_at" timestamptz NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
CREATE UNIQUE INDEX "vaultconnection_provider_id_user_id" ON "vault_connections" ("provider_id", "user_id");
-- create index "vaultconnection_user_id" to table: "vault_connections"
CREATE INDEX "vaultconnection_user_id" ON "vault_connections" ("user_id");

-- +goose Down
-- reverse: create index "vaultconnection_user_id" to table: "vault_connections"
DROP INDEX "vaultconnection_user_id";
-- reverse: create index "vaultconnection_provider_id_user_id" to table: "vault_connections"
DROP INDEX "vaultconnection_provider_id_user_id";
-- reverse: create "vault_connections" table
DROP TABLE "vault_connections";
-- reverse: create index "backchannelrequest_user_id_status" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_user_id_status";
-- reverse: create index "backchannelrequest_req_digest" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_req_digest";
-- reverse: create index "backchannelrequest_ping_next_at" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_ping_next_at";
-- reverse: create index "backchannelrequest_expires_at" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_expires_at";
-- reverse: create index "backchannelrequest_client_id_user_id_status" to table: "backchannel_requests"
DROP INDEX "backchannelrequest_client_id_user_id_status";
-- reverse: create "backchannel_requests" table
DROP TABLE "backchannel_requests";
-- reverse: create index "backchannelclient_project_id_client_id" to table: "backchannel_clients"
DROP INDEX "backchannelclient_project_id_client_id";
-- reverse: create "backchannel_clients" table
DROP TABLE "backchannel_clients";
-- reverse: create index "authorizationdetailtype_project_id_type" to table: "authorization_detail_types"
DROP INDEX "authorizationdetailtype_project_id_type";
-- reverse: create "authorization_detail_types" table
DROP TABLE "authorization_detail_types";
