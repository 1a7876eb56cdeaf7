// Package policy is a project's credential policy (SPEC §12), as the modules that mint
// credentials read it and the project module keeps it.
package policy

import (
	"context"

	"github.com/authcore/authcore/platform/scope"
)

// Policy is a project's credential policy (SPEC §12). A nil limit is no limit beyond the
// service's own; nil AllowedScopes allows any scope.
type Policy struct {
	AgentTokenMaxTTLHours *int     `json:"agentTokenMaxTtlHours"`
	BadgeMaxExpiresInDays *int     `json:"badgeMaxExpiresInDays"`
	AllowedScopes         []string `json:"allowedScopes"`
	// RequireMFA refuses the project's routes to members without a second factor (SPEC §17).
	RequireMFA bool `json:"requireMfa"`
}

// Allows reports whether the policy allows s: no list, or a pattern that covers it by
// the one coverage rule of platform/scope ("x:*" covers "x:…").
func (p Policy) Allows(s string) bool {
	return p.AllowedScopes == nil || scope.CoveredBy(p.AllowedScopes, s)
}

// Source is supplied by the project module to the modules that mint credentials.
type Source interface {
	Policy(ctx context.Context, projectID string) (Policy, error)
}
