// Package deploykey is the template of a credential kind (docs/extending.md): deploy keys
// a project admin mints for a CI system. A kind is its own fields (its ent schema,
// ent/schema/deploykey.go, through schema.KindMixin), its name and prefix, and its routes'
// name; the lifecycle every kind shares (platform/lifecycle) does the rest — mint with the
// secret shown once, list, revoke, roll with a grace, expiry, "who am I", introspection,
// RFC 7009, leak reports, usage counts, audit records and webhook events, the caches of
// every replica, its OpenAPI description and its console screen.
//
// To add a kind, copy this folder to modules/<name> and ent/schema/deploykey.go to
// ent/schema/<name>.go, rename, run go generate and the migration generator, and add
// `<name>.Module,` to cmd/authcore/app/app.go.
package deploykey

import (
	"github.com/authcore/authcore/ent/deploykey"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/lifecycle"
)

// Module is the kind: the one line to add is `deploykey.Module,`.
var Module = lifecycle.Module(lifecycle.Kind{
	Spec: lifecycle.Spec{
		Name:     "deploy_key",       // its kind, metrics label, audit actions (deploy_key.create …)
		Prefixes: []string{"dk"},     // its secrets: ac_dk_…
		Schema:   schema.DeployKey{}, // its own fields
		Mixin:    schema.DeployKeyKind,
		Table:    deploykey.Table,
	},
	Module: "deploykey",   // its folder: AUTHCORE_MODULES selects it by this name
	Path:   "deploy-keys", // /v1/projects/{id}/deploy-keys, /v1/deploy-keys/me
	Title:  "Deploy keys", // its console screen
})
