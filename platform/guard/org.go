package guard

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

// The intents of a setup link (SPEC §26), each a part of an org's setup its session may
// change; IntentMembers is none of them: only the org's own admins manage its people.
const (
	IntentDomains   = "domains"
	IntentSSO       = "sso"
	IntentDirectory = "directory"
	IntentAudit     = "audit"
	IntentMembers   = "members"
	// IntentAny admits any setup session of the org: reading the org itself.
	IntentAny = ""
)

// SetupIntents are the intents a setup link may name.
var SetupIntents = []string{IntentDomains, IntentSSO, IntentDirectory, IntentAudit}

type orgKey struct{}
type setupKey struct{}

// OrgOf is the org OrgAdmin admitted the request for.
func OrgOf(c *fiber.Ctx) string {
	id, _ := c.Locals(orgKey{}).(string)
	return id
}

// SetupOf is the setup session OrgAdmin admitted the request with, if it was one.
func SetupOf(c *fiber.Ctx) (identity.SetupGrant, bool) {
	s, ok := c.Locals(setupKey{}).(identity.SetupGrant)
	return s, ok
}

// errNoOrg answers every org the caller may not see, existing or not: nothing of another
// org is visible (SPEC §26).
var errNoOrg = apperr.New(apperr.KindNotFound, "not_found", "no such organization")

// OrgAdmin admits whoever may administer the route's org (:orgId) for intent, the one
// rule of the /v1/auth-core/orgs/{orgId}/… routes (SPEC §26):
//   - a setup session (Bearer ac_sts_…) of that org whose link named intent (any of its
//     intents for "": reading the org itself);
//   - a session of the org's project's tenant whose role in the org is owner or admin.
//
// A member who is not an admin gets 403; anyone else 404, as if the org did not exist.
// It sets the project (ProjectOf), the org (OrgOf) and, for a session, the role (RoleOf);
// ActorOf is the user, or setup_link:<id> for a setup session.
func (g *Guard) OrgAdmin(intent string) fiber.Handler { return g.orgRole(intent, "owner", "admin") }

// OrgOwner is OrgAdmin for what speaks for every account of the org's verified domains, its
// owners' included: SAML connections and SCIM directories (SPEC §27). An org's admin may
// neither make nor unmake an owner, so an admin's own IdP or directory must not sign in
// as, deprovision or remove one either; an admin gets 403. Setup sessions are admitted as
// by OrgAdmin: a project admin made their link.
func (g *Guard) OrgOwner(intent string) fiber.Handler { return g.orgRole(intent, "owner") }

func (g *Guard) orgRole(intent string, roles ...string) fiber.Handler {
	refused := apperr.Forbidden("you need the " + strings.Join(roles, " or ") + " role in this organization")
	return func(c *fiber.Ctx) error {
		orgID := c.Params("orgId")
		if tok := httpserver.BearerToken(c.Get(fiber.HeaderAuthorization)); secret.KindOf(tok) == identity.SetupSessionKind {
			return g.setupSession(c, strings.Clone(tok), orgID, intent)
		}
		p, err := g.principal(c)
		if err != nil {
			return err
		}
		c.Locals(principalKey{}, p)
		if g.orgs == nil || p.TenantID == identity.PublicTenant {
			return errNoOrg
		}
		m, ok, err := g.orgs.Membership(c.UserContext(), p.TenantID, orgID, p.UserID)
		if err != nil {
			return err
		}
		if !ok {
			return errNoOrg
		}
		if !slices.Contains(roles, m.Role) {
			return refused
		}
		c.Locals(projectKey{}, p.TenantID)
		c.Locals(orgKey{}, orgID)
		c.Locals(roleKey{}, m.Role)
		return c.Next()
	}
}

func (g *Guard) setupSession(c *fiber.Ctx, tok, orgID, intent string) error {
	if g.setups == nil {
		return apperr.Unauthorized("sign in first")
	}
	s, ok, err := g.setups.SetupSession(c.UserContext(), tok)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.Unauthorized("the setup session ended or never was: open a new setup link")
	}
	if s.OrgID != orgID {
		return errNoOrg
	}
	if intent != "" && !slices.Contains(s.Intents, intent) {
		return apperr.Forbidden("this setup link does not cover " + intent)
	}
	c.Locals(setupKey{}, s)
	c.Locals(projectKey{}, s.ProjectID)
	c.Locals(orgKey{}, s.OrgID)
	return c.Next()
}
