-- +goose Up
-- create "sign_in_budgets" table
CREATE TABLE `sign_in_budgets` (`id` text NOT NULL, `tokens` real NOT NULL, `updated_at` integer NOT NULL, PRIMARY KEY (`id`));
-- create index "signinbudget_updated_at" to table: "sign_in_budgets"
CREATE INDEX `signinbudget_updated_at` ON `sign_in_budgets` (`updated_at`);

-- +goose Down
-- reverse: create index "signinbudget_updated_at" to table: "sign_in_budgets"
DROP INDEX `signinbudget_updated_at`;
-- reverse: create "sign_in_budgets" table
DROP TABLE `sign_in_budgets`;
