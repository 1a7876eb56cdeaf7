// Package deploykey is the template of a credential kind (docs/extending.md): deploy keys
// a project admin mints for a CI system. A kind is its own fields (its table, declared
// here), its name and prefix, and its routes' name; the lifecycle every kind shares (platform/lifecycle) does the rest — mint with the
// secret shown once, list, revoke, roll with a grace, expiry, "who am I", introspection,
// RFC 7009, leak reports, usage counts, audit records and webhook events, the caches of
// every replica, its OpenAPI description and its console screen.
//
// To add a kind, copy this folder to modules/<name>, rename, add `<name>.Module,` to
// cmd/authcore/app/app.go and run the migration generator.
package deploykey

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/lifecycle"
)

// Table is its table: what every kind's has (schema.KindMixin: id, project, creator,
// expiry, the secret's digests, revocation, last use, hint), and its own fields below.
var Table = lifecycle.Declare(lifecycle.Table{
	Name:  "deploy_keys",
	Mixin: schema.KindMixin{IDPrefix: "dk_"},
	Fields: []ent.Field{
		field.String("name").Immutable().NotEmpty().MaxLen(80),
		field.String("repository").Optional().Nillable().Immutable().MaxLen(200),
	},
})

// Module is the kind: the one line to add is `deploykey.Module,`.
var Module = lifecycle.Module(lifecycle.Kind{
	Spec: lifecycle.Spec{
		Name:     "deploy_key",   // its kind, metrics label, audit actions (deploy_key.create …)
		Prefixes: []string{"dk"}, // its secrets: ac_dk_…
		Table:    Table,          // its own fields
	},
	Module: "deploykey",   // its folder: AUTHCORE_MODULES selects it by this name
	Path:   "deploy-keys", // /v1/projects/{id}/deploy-keys, /v1/deploy-keys/me
	Title:  "Deploy keys", // its console screen
})
