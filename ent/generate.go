// Package ent holds the schema of every entity (one file each under schema/) and the code
// ent generates from it. Generated files are committed; `go generate ./...` must leave no diff.
package ent

//go:generate go tool ent generate --feature sql/upsert,sql/lock,sql/execquery,sql/versioned-migration ./schema
