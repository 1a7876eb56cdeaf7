// Package credential is the registry of the kinds of secret authcore hands out (SPEC §15):
// each owner — a module, a product plugin — contributes its kind, and whatever must act on
// a presented secret of any kind (RFC 7009 revocation, leak reports, the secret-scanning
// pattern) asks the registry instead of switching on prefixes. A kind added by a new
// owner is revocable everywhere with no other change.
//
// The registry owns the secrets' namespace (SPEC §9b): every kind declares the prefix its
// secrets begin with (ac_<x>_, or a literal such as AKAC) or the JWT typ its tokens carry,
// two claims on one prefix — or one prefix that begins another — stop the process at
// start, and a presented secret goes to the one kind whose prefix it has, found by a map
// lookup: never by registration order.
package credential

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/secret"
)

// Kind is one kind of secret.
type Kind struct {
	// Name is the kind's stable name (ai_agent, service_badge:<product>, oauth_access_token, …).
	Name string
	// Prefix is how every secret of the kind begins: secret.Prefix(x) (ac_<x>_) for the
	// secrets secret.NewToken(x) makes, or a literal of the kind's own format (AKAC). ""
	// only for a kind of JWTs, which JWTType names instead. No prefix may equal or begin
	// another kind's.
	Prefix string
	// JWTType is the typ header of the kind's JWTs (at+jwt, JWT), for a kind without Prefix.
	JWTType string
	// Pattern matches the secret in text (a secret scanner's regular expression, without
	// anchors); "" for a kind no scanner can tell apart (JWTs). A kind with one must have
	// Revoke: leak reports revoke what the pattern finds.
	Pattern string
	// Match reports, without any store lookup, whether a token with the kind's prefix has
	// its format (and checksum, where it has one). nil: secret.CheckToken for an ac_<x>_
	// prefix; true for a JWT of the kind's typ (its owner verifies it).
	Match func(token string) bool
	// Revoke revokes the credential token belongs to, audited as r says; it returns
	// ErrNotLive when token is not a live credential of this kind. nil: a holder
	// cannot revoke it by presenting it (session access tokens end with their session).
	// A kind with neither Revoke nor Introspect only claims its prefix (a password-reset
	// token: single use, and nothing here acts on one presented).
	Revoke func(ctx context.Context, token string, r Revocation) error
	// Introspect answers RFC 7662 for a resource server of project: the fields of an
	// active answer (sub, scope, exp, …; the registry adds kind, the caller active, iss
	// and project_id), or nil when token is not a live credential of that project. nil:
	// the kind is not introspectable.
	Introspect func(ctx context.Context, token, project string) (map[string]any, error)
	// IntrospectedAs is the `kind` of its introspection answers (SPEC §11); "" for Name.
	IntrospectedAs string
	// Events are the webhook event types (audit actions, SPEC §12) its lifecycle emits.
	Events []string
}

// ErrNotLive is a presented credential that is not a live one: unknown, revoked, expired
// or malformed, all alike.
var ErrNotLive = errors.New("credential not live")

// Revocation is how a credential revoked by presenting its secret is audited: no actor,
// Action (empty: the credential's own revoke action) and Metadata added to the record.
type Revocation struct {
	Action   string
	Metadata map[string]any
	Origin   audit.Origin
	// Actor is who revoked when not the credential's holder: the system, acting on a
	// secret scanner's report. Empty: whoever presented it holds it, and the kind names
	// the holder (By).
	Actor audit.ActorType
}

// By is the audit actor of the revocation: the credential's holder (of type holder, id
// holderID) unless r names another actor.
func (r Revocation) By(holder audit.ActorType, holderID string) (*string, audit.ActorType) {
	if r.Actor != "" || holderID == "" {
		return nil, cmp.Or(r.Actor, holder)
	}
	return &holderID, holder
}

// Badges is supplied by the badge module to products whose own secrets revoke their badge.
type Badges interface {
	// RevokeLive revokes the live badge with this id as r says (a product's own secret was
	// presented); ErrNotLive when it is not live.
	RevokeLive(ctx context.Context, badgeID string, r Revocation) error
}

// BadgeNames answers a badge's name, for a product that shows its badge to a person (the
// auth product's approval cards). Apart from Badges, since the badge service depends on
// every product and so no product can depend on it.
type BadgeNames interface {
	// BadgeName is the name of the badge with id; "" when there is none.
	BadgeName(ctx context.Context, id string) (string, error)
}

// AsKinds contributes the []Kind returned by constructor f to the registry.
func AsKinds(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"credential_kinds,flatten"`)))
}

// AsClaim claims prefix for the secrets called name that nothing acts on by presenting
// them here (single-use mailed tokens, authorization codes): a kind with nothing but its
// prefix, so no product or kind can be given secrets that look like them.
func AsClaim(name, prefix string) fx.Option {
	return AsKinds(func() []Kind { return []Kind{{Name: name, Prefix: prefix}} })
}

// Module provides the registry.
var Module = fx.Module("credential", fx.Provide(New))

// Registry is every contributed kind.
type Registry struct {
	kinds   []Kind
	pattern *regexp.Regexp
	// byKey finds the kind of an ac_<x>_ secret by x, byLiteral that of a secret with
	// another prefix (by its first n bytes, for each n in lengths), byType that of a JWT.
	byKey, byLiteral, byType map[string]*Kind
	lengths                  []int
}

// Params are the registry's contributions.
type Params struct {
	fx.In
	Kinds []Kind `group:"credential_kinds"`
}

// New checks and orders the contributed kinds: names are unique, every kind can be told
// apart by its prefix or its JWT typ and can be matched and revoked, and no prefix is
// another's or begins another.
func New(p Params) (*Registry, error) {
	kinds := append([]Kind(nil), p.Kinds...)
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Name < kinds[j].Name })
	r := &Registry{kinds: kinds, byKey: map[string]*Kind{}, byLiteral: map[string]*Kind{}, byType: map[string]*Kind{}}
	var alts []string
	for i := range kinds {
		k := &kinds[i]
		if err := k.check(); err != nil {
			return nil, err
		}
		if i > 0 && kinds[i-1].Name == k.Name {
			return nil, fmt.Errorf("credential kind %q is contributed twice", k.Name)
		}
		if k.Pattern != "" {
			alts = append(alts, "(?:"+k.Pattern+")")
		}
		if err := r.claim(k); err != nil {
			return nil, err
		}
	}
	if len(alts) > 0 {
		r.pattern = regexp.MustCompile(`\b(?:` + strings.Join(alts, "|") + `)\b`)
	}
	return r, nil
}

// tokenKey is an ac_<x>_ prefix: what secret.Prefix makes and secret.KindOf reads back.
var tokenKey = regexp.MustCompile(`^ac_([a-z0-9]+)_$`)

func (k *Kind) check() error {
	switch {
	case k.Name == "":
		return fmt.Errorf("a credential kind has no name (prefix %q)", k.Prefix)
	case (k.Prefix == "") == (k.JWTType == ""):
		return fmt.Errorf("credential kind %q must declare either its secrets' prefix or its JWTs' typ", k.Name)
	case strings.HasPrefix(k.Prefix, "ac_") && !tokenKey.MatchString(k.Prefix):
		return fmt.Errorf("credential kind %q: prefix %q: an ac_ prefix is ac_<lower-case letters and digits>_", k.Name, k.Prefix)
	case k.Match == nil && k.Prefix != "" && !strings.HasPrefix(k.Prefix, "ac_"):
		return fmt.Errorf("credential kind %q: prefix %q is not ac_<x>_, so it needs a Match", k.Name, k.Prefix)
	// What a scanner can find must be revocable (a leak report acts on it) and have a
	// prefix: a scanner tells secrets apart by it.
	case k.Pattern != "" && (k.Revoke == nil || k.Prefix == ""):
		return fmt.Errorf("credential kind %q has a scanner pattern but no Revoke or no prefix", k.Name)
	}
	if k.Pattern != "" {
		if _, err := regexp.Compile(k.Pattern); err != nil {
			return fmt.Errorf("credential kind %q: pattern: %w", k.Name, err)
		}
	}
	if k.Match == nil {
		if m := tokenKey.FindStringSubmatch(k.Prefix); m != nil {
			key := m[1]
			k.Match = func(t string) bool { return secret.CheckToken(key, t) }
		} else {
			k.Match = func(string) bool { return true }
		}
	}
	return nil
}

// claim enters k's prefix or JWT typ, refusing one already claimed, one that begins a
// claimed one, and one a claimed one begins: a secret of one could be taken for the other.
func (r *Registry) claim(k *Kind) error {
	if k.Prefix == "" {
		if other, dup := r.byType[k.JWTType]; dup {
			return fmt.Errorf("JWT typ %q is claimed by both credential kinds %s and %s", k.JWTType, other.Name, k.Name)
		}
		r.byType[k.JWTType] = k
		return nil
	}
	for _, claimed := range []map[string]*Kind{r.byKey, r.byLiteral} {
		for _, other := range claimed {
			switch {
			case other.Prefix == k.Prefix:
				return fmt.Errorf("secret prefix %s is claimed by both credential kinds %s and %s", k.Prefix, other.Name, k.Name)
			case strings.HasPrefix(other.Prefix, k.Prefix), strings.HasPrefix(k.Prefix, other.Prefix):
				return fmt.Errorf("secret prefix %s of credential kind %s and %s of %s: one begins the other", other.Prefix, other.Name, k.Prefix, k.Name)
			}
		}
	}
	if m := tokenKey.FindStringSubmatch(k.Prefix); m != nil {
		r.byKey[m[1]] = k
		return nil
	}
	r.byLiteral[k.Prefix] = k
	if !slices.Contains(r.lengths, len(k.Prefix)) {
		r.lengths = append(r.lengths, len(k.Prefix))
	}
	return nil
}

// Kinds lists the kinds by name.
func (r *Registry) Kinds() []Kind { return append([]Kind(nil), r.kinds...) }

// Of returns the kind token belongs to: the one whose prefix it has (or, for a JWT, whose
// typ it carries), when it has that kind's format. Prefixes are claimed once and none
// begins another, so at most one kind can own a token and the lookups below are exact.
func (r *Registry) Of(token string) (Kind, bool) {
	k := r.owner(token)
	if k == nil || !k.Match(token) {
		return Kind{}, false
	}
	return *k, true
}

func (r *Registry) owner(token string) *Kind {
	if key := secret.KindOf(token); key != "" {
		return r.byKey[key]
	}
	for _, n := range r.lengths {
		if len(token) >= n {
			if k, ok := r.byLiteral[token[:n]]; ok {
				return k
			}
		}
	}
	if len(r.byType) > 0 {
		if typ, ok := JWTType(token); ok {
			return r.byType[typ]
		}
	}
	return nil
}

// Revoke revokes whatever live credential token is, and names its kind. A token of no
// kind, or of a kind but not live, is ErrNotLive.
func (r *Registry) Revoke(ctx context.Context, token string, rev Revocation) (string, error) {
	k, ok := r.Of(token)
	if !ok || k.Revoke == nil {
		return "", ErrNotLive
	}
	return k.Name, k.Revoke(ctx, token, rev)
}

// Introspect is the RFC 7662 answer's fields for token on behalf of project, from the
// kind that owns it; nil when no kind owns it or it is not live for that project.
func (r *Registry) Introspect(ctx context.Context, token, project string) (map[string]any, error) {
	k, ok := r.Of(token)
	if !ok || k.Introspect == nil {
		return nil, nil
	}
	fields, err := k.Introspect(ctx, token, project)
	if fields != nil {
		fields["kind"] = k.introspectedAs()
	}
	return fields, err
}

func (k Kind) introspectedAs() string {
	if k.IntrospectedAs != "" {
		return k.IntrospectedAs
	}
	return k.Name
}

// IntrospectedKinds are the `kind` values introspection can answer, sorted: what the API
// document's enum must list.
func (r *Registry) IntrospectedKinds() []string {
	var out []string
	for _, k := range r.kinds {
		if k.Introspect != nil {
			out = append(out, k.introspectedAs())
		}
	}
	return sortedSet(out)
}

// Events are every kind's webhook event types, sorted.
func (r *Registry) Events() []string {
	var out []string
	for _, k := range r.kinds {
		out = append(out, k.Events...)
	}
	return sortedSet(out)
}

func sortedSet(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// JWTType is the typ of a compact JWS's protected header, read without verifying
// anything: what tells the kinds of JWT apart cheaply in Match (at+jwt for OAuth access
// tokens, JWT for session access tokens). Hand-written because a JOSE library would verify
// or fully parse the token, which Match must not pay for; the owner verifies in Introspect.
func JWTType(token string) (string, bool) {
	head, rest, ok := strings.Cut(token, ".")
	if !ok || strings.Count(rest, ".") != 1 || len(head) > 1024 {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return "", false
	}
	var h struct {
		Typ string `json:"typ"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", false
	}
	return h.Typ, true
}

// Pattern matches any scannable secret of any kind (nil when none is scannable): what a
// secret-scanning partner registers, and what leak reports are checked against.
func (r *Registry) Pattern() *regexp.Regexp { return r.pattern }

// ScanPattern is Pattern's text ("" when none).
func (r *Registry) ScanPattern() string {
	if r.pattern == nil {
		return ""
	}
	return r.pattern.String()
}

// RevokeBadgeOf is the Revoke of a product's own secret (a client secret, an access key
// kept beside the badge): find names the badge whose credential token is — ent's not-found when none
// is live — and the whole badge is revoked, with every credential of its product.
func RevokeBadgeOf(badges Badges, find func(ctx context.Context, token string) (badgeID string, err error)) func(context.Context, string, Revocation) error {
	return func(ctx context.Context, token string, r Revocation) error {
		id, err := find(ctx, token)
		if ent.IsNotFound(err) {
			return ErrNotLive
		}
		if err != nil {
			return err
		}
		return badges.RevokeLive(ctx, id, r)
	}
}
