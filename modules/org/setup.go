package org

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/orgsetuplink"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/secret"
)

const (
	// setupLinkKind is the link's secret (ac_stl_…); the session it opens is
	// identity.SetupSessionKind's.
	setupLinkKind = "stl"
	// setupOpenWithin is how long a link may wait to be opened; setupSessionTTL how long
	// what it opened lasts (SPEC §26).
	setupOpenWithin = 5 * time.Minute
	setupSessionTTL = 60 * time.Minute
	// SetupPath is the console page a link opens; the secret rides in the fragment, which
	// browsers send to no server and no Referer carries.
	SetupPath = "/console/setup"

	actionSetupLinkCreate = "org.setup_link_create"
	actionSetupLinkOpen   = "org.setup_link_open"
)

var (
	errSetupLinkGone = apperr.New(apperr.KindNotFound, "setup_link_invalid", "this setup link was opened already, has expired or never was: ask for a new one")
	setupFields      = []string{"intents"}
)

// SetupLink is a created link: its url holds the secret, shown this once.
type SetupLink struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"orgId"`
	Intents   []string  `json:"intents"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// OpenedSetup is what opening a link gives the IT admin's browser: a setup session's
// token (shown once) and what it may do.
type OpenedSetup struct {
	SetupToken string    `json:"setupToken"`
	ExpiresAt  time.Time `json:"expiresAt"`
	Org        Org       `json:"org"`
	Intents    []string  `json:"intents"`
}

// CreateSetupLink makes a link for org's IT admin (SPEC §26).
func (s *Service) CreateSetupLink(ctx context.Context, a Actor, orgID string, intents []string) (SetupLink, error) {
	tok, err := secret.NewToken(setupLinkKind)
	if err != nil {
		return SetupLink{}, err
	}
	now := s.clock.Now()
	var l *ent.OrgSetupLink
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		if _, err := row(ctx, tx.Org, a.Project, orgID); err != nil {
			return err
		}
		if l, err = tx.OrgSetupLink.Create().SetProjectID(a.Project).SetOrgID(orgID).SetIntents(intents).
			SetDigest(secret.DigestOf(tok).Bytes()).SetExpiresAt(now.Add(setupOpenWithin)).SetNillableCreatedBy(a.ID).Save(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionSetupLinkCreate, orgID, map[string]any{"setupLinkId": l.ID, "intents": intents})
	})
	if err != nil {
		return SetupLink{}, err
	}
	return SetupLink{ID: l.ID, OrgID: orgID, Intents: intents, URL: s.selfURL + SetupPath + "#" + tok, ExpiresAt: l.ExpiresAt.UTC()}, nil
}

// OpenSetupLink spends a link: once, within setupOpenWithin, for a setup session of an
// hour. Every refusal is the same 404, so a guess learns nothing from it.
func (s *Service) OpenSetupLink(ctx context.Context, tok string, origin audit.Origin) (OpenedSetup, error) {
	if !secret.CheckToken(setupLinkKind, tok) {
		return OpenedSetup{}, errSetupLinkGone
	}
	session, err := secret.NewToken(identity.SetupSessionKind)
	if err != nil {
		return OpenedSetup{}, err
	}
	now := s.clock.Now()
	var out OpenedSetup
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		l, err := tx.OrgSetupLink.Query().Where(orgsetuplink.Digest(secret.DigestOf(tok).Bytes())).Only(ctx)
		if ent.IsNotFound(err) {
			return errSetupLinkGone
		}
		if err != nil {
			return err
		}
		// One conditional update: of two concurrent opens, one wins.
		n, err := tx.OrgSetupLink.Update().Where(orgsetuplink.ID(l.ID), orgsetuplink.OpenedAtIsNil(), orgsetuplink.ExpiresAtGT(now)).
			SetOpenedAt(now).SetSessionDigest(secret.DigestOf(session).Bytes()).SetSessionExpiresAt(now.Add(setupSessionTTL)).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errSetupLinkGone
		}
		o, err := row(ctx, tx.Org, l.ProjectID, l.OrgID)
		if err != nil {
			return errSetupLinkGone // the org was deleted since
		}
		actor := "setup_link:" + l.ID
		if err := s.record(ctx, tx, Actor{ID: &actor, Project: l.ProjectID, Origin: origin}, actionSetupLinkOpen, l.OrgID, map[string]any{"setupLinkId": l.ID}); err != nil {
			return err
		}
		out = OpenedSetup{SetupToken: session, ExpiresAt: now.Add(setupSessionTTL).UTC(), Org: viewOf(o), Intents: l.Intents}
		return nil
	})
	return out, err
}

var _ identity.OrgSetup = (*Service)(nil)

// SetupSession is identity.OrgSetup's: the live setup session tok is, read from the store
// each time (setup sessions are few and short; a revoked org ends them at once).
func (s *Service) SetupSession(ctx context.Context, tok string) (identity.SetupGrant, bool, error) {
	if !secret.CheckToken(identity.SetupSessionKind, tok) {
		return identity.SetupGrant{}, false, nil
	}
	l, err := s.ent.OrgSetupLink.Query().Where(orgsetuplink.SessionDigest(secret.DigestOf(tok).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return identity.SetupGrant{}, false, nil
	}
	if err != nil {
		return identity.SetupGrant{}, false, err
	}
	if l.SessionExpiresAt == nil || !s.clock.Now().Before(*l.SessionExpiresAt) {
		return identity.SetupGrant{}, false, nil
	}
	if _, err := row(ctx, s.ent.Org, l.ProjectID, l.OrgID); err != nil {
		return identity.SetupGrant{}, false, nil
	}
	return identity.SetupGrant{LinkID: l.ID, ProjectID: l.ProjectID, OrgID: l.OrgID, Intents: l.Intents, ExpiresAt: *l.SessionExpiresAt}, true, nil
}

// readIntents reads { intents: [domains|sso|directory|audit, …] }: at least one, each once.
func readIntents(body []byte) ([]string, error) {
	f := jsonbody.Read(body)
	refuseUnknown(f, setupFields, "a setup link")
	v, st := f.Strings("intents")
	switch {
	case st != jsonbody.OK:
		f.Fail("intents", "required: an array of domains, sso, directory, audit")
	case len(v) == 0:
		f.Fail("intents", "name at least one of domains, sso, directory, audit")
	}
	for i, in := range v {
		if !slices.Contains(guard.SetupIntents, in) || slices.Index(v, in) != i {
			f.Fail("intents", "each of domains, sso, directory, audit at most once")
			break
		}
	}
	return v, f.Err()
}

func (h handler) createSetupLink(c *fiber.Ctx) error {
	intents, err := readIntents(c.Body())
	if err != nil {
		return err
	}
	l, err := h.svc.CreateSetupLink(c.UserContext(), actorOf(c), c.Params("orgId"), intents)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(l)
}

// openSetupLink is POST /v1/auth-core/orgs/setup/open { token }: no session, the link is
// the credential.
func (h handler) openSetupLink(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	tok := f.RequiredString("token")
	if err := f.Err(); err != nil {
		return err
	}
	out, err := h.svc.OpenSetupLink(c.UserContext(), string([]byte(tok)), actorOf(c).Origin)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}
