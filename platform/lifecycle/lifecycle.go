// Package lifecycle is the one credential lifecycle (SPEC §12, §15, §19), written once for
// every kind of secret a project holds: mint (the secret shown once, its digest stored),
// list, revoke (by an admin, by the holder presenting it, by a leak report), roll with a
// grace, expiry, "who am I", introspection, usage counting, audit records and webhook
// events in the same transaction, and invalidation of every replica's caches on commit.
//
// A kind supplies only what is its own: its name and prefix, its table (its own fields,
// declared in its folder with Declare), its routes' names and, where the contract gives it
// shapes of its own (agent tokens and badges, from the seed), the hooks that shape them.
// Module turns a Spec into a full citizen; modules/agenttoken and modules/badge build on
// New with their own hooks.
package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/secret"
)

// Spec is what a kind is made of.
type Spec struct {
	// Name is the kind's name: its credential kind, its metrics and usage label, its
	// caches' invalidation topic, and (unless Actions says otherwise) its audit actions'
	// prefix: <name>.create, <name>.roll, <name>.revoke.
	Name string
	// Prefixes are the x of its secrets' ac_<x>_ prefixes: one for most kinds, one per
	// product for badges (whose Key hook says which a credential's is).
	Prefixes []string
	// Table is its table, declared in its folder (Declare): its own fields.
	Table *Table
	// Actions prefixes its audit actions when not Name (agent tokens: ai_token).
	Actions string
	// IDField names the credential's id in audit metadata; "" for camel(Name)+"Id".
	IDField string
	// IntrospectedAs is the kind introspection answers name; "" for Name.
	IntrospectedAs string
	// BoundField names the own field holding the thumbprint of the DPoP key a credential
	// may be bound to (SPEC §22); "" for a kind whose credentials are never bound. A bound
	// credential verifies only with a proof by that key.
	BoundField string
	// Holder is what holds a credential of the kind: the audit actor of its revocation by
	// presenting it: agent_token for agent tokens; empty is a client (badges, deploy keys:
	// a machine's credential).
	Holder audit.ActorType
}

func (s Spec) action(verb string) string {
	if s.Actions != "" {
		return s.Actions + "." + verb
	}
	return s.Name + "." + verb
}

func (s Spec) idField() string {
	if s.IDField != "" {
		return s.IDField
	}
	return camel(s.Name) + "Id"
}

// Events are the webhook event types its lifecycle emits.
func (s Spec) Events() []string {
	return []string{s.action("create"), s.action("roll"), s.action("revoke")}
}

// camel turns a column or kind name into a JSON name: agent_name → agentName.
func camel(name string) string {
	var b strings.Builder
	up := false
	for _, r := range name {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Hooks are where a kind whose contract has shapes of its own departs from the defaults.
// Every one is optional.
type Hooks struct {
	// Answer appends its "who am I" answer for a live credential to dst. It runs on every
	// request of the kind's hottest route: a kind with many credentials writes it by hand
	// (package jsonbody's Append functions) rather than through encoding/json's reflection.
	Answer func(dst []byte, r *Row) ([]byte, error)
	// Introspect adds its fields to an active RFC 7662 answer (sub, exp and token_type are
	// there already); r's ExpiresAt is when the presented secret stops. (r is a copy, passed
	// by value so that introspection allocates no row.)
	Introspect func(r Row, fields map[string]any)
	// Label is a credential's second metrics label (badges: the product).
	Label func(r *Row) string
	// Key is the prefix x of a credential's secrets when the kind has several (badges:
	// its product).
	Key func(r *Row) string
	// Minted, Rolled and Revoked run inside the transaction of a mint, a roll and a
	// revoke: what the credential owns beside its row (a product's credentials). Minted and
	// Rolled return what the answer carries beside the secret; Minted is handed the
	// mint's Options.
	Minted  func(ctx context.Context, tx *ent.Tx, r *Row, options any) (any, error)
	Rolled  func(ctx context.Context, tx *ent.Tx, r *Row, graceUntil *time.Time) (any, error)
	Revoked func(ctx context.Context, tx *ent.Tx, r *Row) error
	// CreateMetadata and RollMetadata add to those audit records' metadata (beside the id
	// and, for a roll, previousSecretExpiresAt); nil: every own field, by its JSON name,
	// for a create, nothing more for a roll.
	CreateMetadata func(r *Row) map[string]any
	RollMetadata   func(r *Row) map[string]any
	// Org is the org of the project a credential is bound to, or "" (SPEC §26): its
	// create, roll and revoke records carry it, so an org's audit trail has them. nil: none.
	Org func(r *Row) string
	// NotFound and RollNotFound answer a revoke and a roll of what is not a live
	// credential of the project; nil: 404 not_found.
	NotFound, RollNotFound error
	// Failed wraps a store failure of op ("create", "list", "revoke", "roll"); nil: the
	// failure as it is (a 500).
	Failed func(op string, err error) error
}

// Deps are what every lifecycle stands on.
type Deps struct {
	fx.In
	Ent    *ent.Client
	DB     *database.DB
	Audit  *audit.Recorder
	Kit    bearer.Kit
	Config config.Config
	// DPoP checks the proofs of bound credentials (SPEC §22).
	DPoP *dpop.Checker `optional:"true"`
}

// Lifecycle is one kind's.
type Lifecycle struct {
	spec     Spec
	hooks    Hooks
	t        *table
	keys     map[string]bool
	ent      *ent.Client
	deps     Deps
	verifier *bearer.Verifier[*Verified]
	byID     *bearer.Cache[string, *liveness]
}

// New returns the lifecycle of spec's kind, its caches following invalidations from
// every replica.
func New(d Deps, spec Spec, hooks Hooks) (*Lifecycle, error) {
	if spec.Name == "" || (len(spec.Prefixes) == 0 && hooks.Key == nil) || spec.Table == nil {
		return nil, fmt.Errorf("credential kind %q: a lifecycle needs a name, a prefix and a table", spec.Name)
	}
	t, err := newTable(spec.Table.Name, d.DB.Storage, spec.Table.Mixin, spec.Table.Schema())
	if err != nil {
		return nil, err
	}
	if hooks.NotFound == nil {
		hooks.NotFound = errNotFound
	}
	if hooks.RollNotFound == nil {
		hooks.RollNotFound = hooks.NotFound
	}
	l := &Lifecycle{spec: spec, hooks: hooks, t: t, keys: map[string]bool{}, ent: d.Ent, deps: d,
		byID: bearer.NewCache[string, *liveness](d.Kit.Limits.Size, d.Kit.Limits.PositiveTTL)}
	for _, k := range spec.Prefixes {
		l.keys[k] = true
	}
	l.verifier = bearer.NewVerifier[*Verified](d.Kit, spec.Name, verifyStore{l})
	bearer.Follow(d.Kit.Bus, l.idTopic(), l.byID)
	return l, nil
}

// Spec is the kind's spec.
func (l *Lifecycle) Spec() Spec { return l.spec }

// idTopic invalidates the by-id liveness cache (Live).
func (l *Lifecycle) idTopic() string { return l.spec.Name + "_id" }

// Kinds are the kind's entries in the credential registry, one per prefix: its secrets
// are revoked by RFC 7009 and leak reports, introspected, found by the scanning pattern.
func (l *Lifecycle) Kinds() []credential.Kind {
	var out []credential.Kind
	for _, key := range l.spec.Prefixes {
		name := l.spec.Name
		if l.hooks.Key != nil { // a kind of several prefixes: one entry each
			name += ":" + key
		}
		out = append(out, credential.Kind{
			Name: name, Prefix: secret.Prefix(key), Pattern: secret.Pattern(key),
			Revoke: l.RevokePresented, Introspect: l.Introspect,
			IntrospectedAs: l.introspectedAs(name), Events: l.spec.Events(),
		})
	}
	return out
}

func (l *Lifecycle) introspectedAs(name string) string {
	if l.spec.IntrospectedAs != "" {
		return l.spec.IntrospectedAs
	}
	if name != l.spec.Name {
		return l.spec.Name
	}
	return ""
}

// wellFormed reports whether token is a secret of one of the kind's prefixes with a
// checksum that holds: what must be true before a cache or the store is asked.
func (l *Lifecycle) wellFormed(token string) bool {
	key := secret.KindOf(token)
	return l.keys[key] && secret.CheckToken(key, token)
}

func (l *Lifecycle) failed(op string, err error) error {
	if l.hooks.Failed != nil {
		return l.hooks.Failed(op, err)
	}
	return err
}
