package org

import (
	"cmp"
	"context"
	"log/slog"
	"net/url"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/orginvitation"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	platformmail "github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/secret"
)

// Invitations to an org (SPEC §26): a project admin or an org admin invites an address
// with a role; a single-use link goes to it by mail, and the user of the project's
// tenant who holds that address, verified, accepts it signed in and becomes a member.
// The secret is a token kind of its own (ac_oinv_…); only its digest is kept.
const (
	invitationKind  = "oinv" // ac_oinv_…
	invitationTTL   = 7 * 24 * time.Hour
	maxPending      = 100 // live invitations per org
	invitesPerHour  = 20  // invitations per project in an hour: the mail a project may cause
	addressPerHour  = 3   // invitations to one address in an hour, from any org of any project
	invitationsPath = "/console/org-invite?token="

	actionInvite       = "org.invitation_create"
	actionInviteAccept = "org.invitation_accept"
	actionInviteRevoke = "org.invitation_revoke"
)

// Invitation is the public view of a pending invitation (never its secret).
type Invitation struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"orgId"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func invitationView(i *ent.OrgInvitation) Invitation {
	return Invitation{ID: i.ID, OrgID: i.OrgID, Email: i.Email, Role: i.Role, CreatedBy: i.CreatedBy,
		CreatedAt: i.CreatedAt.UTC(), ExpiresAt: i.ExpiresAt.UTC()}
}

// Accepted is what accepting answers: the org and the new membership.
type Accepted struct {
	Org    Org    `json:"org"`
	Member Member `json:"member"`
}

// Invitations keeps orgs' invitations beside the Service that keeps their members. It
// knows nothing of HTTP.
type Invitations struct {
	org   *Service
	clock clock.Clock
	mail  platformmail.Sender
	log   *slog.Logger
	// self is the server's own URL: mailed links never follow a request's Host.
	self string
}

// live narrows to invitations neither accepted, revoked nor expired.
func (s *Invitations) live() []predicate.OrgInvitation {
	return []predicate.OrgInvitation{orginvitation.AcceptedAtIsNil(), orginvitation.RevokedAtIsNil(), orginvitation.ExpiresAtGT(s.clock.Now())}
}

// Invite creates an invitation of email to orgID with role and mails its link. An
// address that is a member already is refused, as is one with a pending invitation.
func (s *Invitations) Invite(ctx context.Context, a Actor, orgID, email, role string) (Invitation, error) {
	if err := a.mayTouch(role); err != nil {
		return Invitation{}, err
	}
	if !s.mail.Configured() {
		return Invitation{}, errMailNotConfigured
	}
	if a.ID == nil {
		return Invitation{}, errOrgNotFound // every route that invites has a signed-in actor
	}
	token, err := secret.NewToken(invitationKind)
	if err != nil {
		return Invitation{}, err
	}
	now := s.clock.Now()
	var inv *ent.OrgInvitation
	var o *ent.Org
	err = database.WithTx(ctx, s.org.ent, func(tx *ent.Tx) error {
		var err error
		if o, err = row(ctx, tx.Org, a.Project, orgID); err != nil {
			return err
		}
		if ok, err := roleExists(ctx, tx, a.Project, role); err != nil || !ok {
			return cmpErr(err, errNoRole)
		}
		if acc, ok, err := s.org.users.AccountByEmail(ctx, a.Project, email); err != nil {
			return err
		} else if ok {
			if _, member, err := s.org.Membership(ctx, a.Project, orgID, acc.ID); err != nil || member {
				return cmpErr(err, errAlreadyMember)
			}
		}
		pending, err := tx.OrgInvitation.Query().Where(orginvitation.OrgID(orgID), orginvitation.ProjectID(a.Project)).Where(s.live()...).All(ctx)
		if err != nil {
			return err
		}
		for _, p := range pending {
			if p.Email == email {
				return errAlreadyInvited
			}
		}
		if len(pending) >= maxPending {
			return errTooManyInvites
		}
		// Per org: one org's admins cannot spend the others' budget (an attacker's review).
		recent, err := tx.OrgInvitation.Query().Where(orginvitation.ProjectID(a.Project), orginvitation.OrgID(orgID), orginvitation.CreatedAtGT(now.Add(-time.Hour))).Count(ctx)
		if err != nil {
			return err
		}
		if recent >= invitesPerHour {
			return errInvitesRateLimit
		}
		// An org admin is anyone a project let in: one address is not theirs to flood,
		// even by revoking and inviting again.
		toAddress, err := tx.OrgInvitation.Query().Where(orginvitation.Email(email), orginvitation.CreatedAtGT(now.Add(-time.Hour))).Count(ctx)
		if err != nil {
			return err
		}
		if toAddress >= addressPerHour {
			return errAddressRateLimit
		}
		inv, err = tx.OrgInvitation.Create().SetProjectID(a.Project).SetOrgID(orgID).SetEmail(email).SetRole(role).
			SetDigest(secret.DigestOf(token).Bytes()).SetCreatedBy(*a.ID).SetCreatedAt(now).SetExpiresAt(now.Add(invitationTTL)).Save(ctx)
		if err != nil {
			return err
		}
		return s.org.record(ctx, tx, a, actionInvite, orgID, map[string]any{"invitationId": inv.ID, "email": email, "role": role})
	})
	if err != nil {
		return Invitation{}, err
	}
	s.send(ctx, inv, token, o.Name)
	return invitationView(inv), nil
}

// send renders the invitation mail and queues it. The org's name and the address stand
// only quoted after their labels, as the project invitations' do.
func (s *Invitations) send(ctx context.Context, inv *ent.OrgInvitation, token, orgName string) {
	data := map[string]any{"Org": platformmail.Quote(orgName), "Role": inv.Role, "Email": platformmail.Quote(inv.Email),
		"Link": s.self + invitationsPath + url.QueryEscape(token) + "&tenant=" + url.QueryEscape(inv.ProjectID)}
	text, html, err := mails.Render("org_invitation", data)
	if err != nil {
		s.log.ErrorContext(ctx, "rendering the org invitation mail", "error", err)
		return
	}
	if err := s.mail.Send(platformmail.Message{To: inv.Email, Subject: "You are invited to an organization",
		Text: text, HTML: html, Purpose: "org_invitation"}); err != nil {
		// The invitation stands; an admin sees it listed and may revoke and invite again.
		s.log.WarnContext(ctx, "mail not queued", "purpose", "org_invitation", "error", err)
	}
}

// Invitations are an org's pending invitations, newest first.
func (s *Invitations) List(ctx context.Context, project, orgID string) ([]Invitation, error) {
	if _, err := row(ctx, s.org.ent.Org, project, orgID); err != nil {
		return nil, err
	}
	rows, err := s.org.ent.OrgInvitation.Query().Where(orginvitation.OrgID(orgID), orginvitation.ProjectID(project)).Where(s.live()...).
		Order(orginvitation.ByCreatedAt(sql.OrderDesc()), orginvitation.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Invitation, len(rows))
	for i, r := range rows {
		out[i] = invitationView(r)
	}
	return out, nil
}

// RevokeInvitation ends one of the org's pending invitations. An admin who is not an
// owner cannot revoke an invitation to be owner, as they could not have made it.
func (s *Invitations) Revoke(ctx context.Context, a Actor, orgID, id string) error {
	return database.WithTx(ctx, s.org.ent, func(tx *ent.Tx) error {
		inv, err := tx.OrgInvitation.Query().Where(orginvitation.ID(id), orginvitation.OrgID(orgID), orginvitation.ProjectID(a.Project)).
			Where(s.live()...).Only(ctx)
		if ent.IsNotFound(err) {
			return errInvitationGone
		}
		if err != nil {
			return err
		}
		if err := a.mayTouch(inv.Role); err != nil {
			return err
		}
		n, err := tx.OrgInvitation.Update().Where(orginvitation.ID(inv.ID)).Where(s.live()...).SetRevokedAt(s.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errInvitationGone
		}
		return s.org.record(ctx, tx, a, actionInviteRevoke, orgID, map[string]any{"invitationId": inv.ID, "email": inv.Email})
	})
}

// Accept makes p — a user of the invitation's project's tenant who holds the invited
// address (case-folded), verified — a member with the invitation's role, and spends the
// invitation. A token of another project's org is not found: nothing of another tenant
// is told. Refusals other than a spent link leave the invitation pending.
func (s *Invitations) Accept(ctx context.Context, p identity.Principal, token string, origin audit.Origin) (Accepted, error) {
	if !secret.CheckToken(invitationKind, token) {
		return Accepted{}, errInvitationUnknown
	}
	inv, err := s.org.ent.OrgInvitation.Query().Where(orginvitation.Digest(secret.DigestOf(token).Bytes()), orginvitation.ProjectID(p.TenantID)).Only(ctx)
	if ent.IsNotFound(err) {
		return Accepted{}, errInvitationUnknown
	}
	if err != nil {
		return Accepted{}, err
	}
	now := s.clock.Now()
	switch {
	case inv.AcceptedAt != nil:
		return Accepted{}, errInvitationUsed
	case inv.RevokedAt != nil:
		return Accepted{}, errInvitationRevoked
	case !inv.ExpiresAt.After(now):
		return Accepted{}, errInvitationExpired
	}
	acc, err := s.org.users.Account(ctx, p.UserID)
	if err != nil {
		return Accepted{}, err
	}
	if identity.FoldEmail(acc.Email) != identity.FoldEmail(inv.Email) {
		return Accepted{}, errInvitationEmail
	}
	if !acc.EmailVerified {
		return Accepted{}, errEmailNotVerified
	}
	userID := p.UserID
	a := Actor{ID: &userID, Project: inv.ProjectID, Origin: origin}
	var out Accepted
	err = database.WithTx(ctx, s.org.ent, func(tx *ent.Tx) error {
		o, err := row(ctx, tx.Org, inv.ProjectID, inv.OrgID)
		if err != nil {
			return err
		}
		m, err := tx.OrgMember.Create().SetProjectID(inv.ProjectID).SetOrgID(inv.OrgID).SetUserID(userID).SetRole(inv.Role).Save(ctx)
		if ent.IsConstraintError(err) {
			return errAlreadyMember
		}
		if err != nil {
			return err
		}
		n, err := tx.OrgInvitation.Update().Where(orginvitation.ID(inv.ID)).Where(s.live()...).SetAcceptedAt(now).SetAcceptedBy(userID).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 { // accepted, revoked or expired since it was read
			return errInvitationUsed
		}
		out = Accepted{Org: viewOf(o), Member: Member{OrgID: o.ID, UserID: userID, Email: acc.Email, Role: m.Role, CreatedAt: m.CreatedAt.UTC()}}
		return s.org.record(ctx, tx, a, actionInviteAccept, o.ID, map[string]any{"invitationId": inv.ID, "userId": userID, "role": inv.Role,
			"invitedBy": inv.CreatedBy})
	})
	return out, err
}

// revokePresented is the credential kind's Revoke: whoever holds the link may end it
// (RFC 7009, leak reports), as with a project invitation's.
func (s *Invitations) revokePresented(ctx context.Context, token string, r credential.Revocation) error {
	if !secret.CheckToken(invitationKind, token) {
		return credential.ErrNotLive
	}
	action := cmp.Or(r.Action, actionInviteRevoke)
	// The link's holder may have no account in the tenant yet: a user with no id.
	_, actorType := r.By(audit.ActorUser, "")
	return database.WithTx(ctx, s.org.ent, func(tx *ent.Tx) error {
		inv, err := tx.OrgInvitation.Query().Where(orginvitation.Digest(secret.DigestOf(token).Bytes())).Where(s.live()...).Only(ctx)
		if ent.IsNotFound(err) {
			return credential.ErrNotLive
		}
		if err != nil {
			return err
		}
		if err := tx.OrgInvitation.UpdateOne(inv).SetRevokedAt(s.clock.Now()).Exec(ctx); err != nil {
			return err
		}
		md := map[string]any{"invitationId": inv.ID, "email": inv.Email, "orgId": inv.OrgID}
		for k, v := range r.Metadata {
			md[k] = v
		}
		orgID := inv.OrgID
		_, err = s.org.audit.Record(ctx, tx, audit.Event{ActorType: actorType, ProjectID: inv.ProjectID, OrgID: &orgID, Action: action, Metadata: md, Origin: r.Origin})
		return err
	})
}
