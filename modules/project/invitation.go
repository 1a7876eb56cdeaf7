package project

import (
	"context"
	"embed"
	"errors"
	"log/slog"
	"net/url"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/invitation"
	"github.com/authcore/authcore/ent/membership"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	platformmail "github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/secret"
)

// Invitations (SPEC §9b, N19): an admin invites an address to a project, with a role; a
// single-use link goes to it by mail, and the dashboard user who holds that address,
// verified, accepts it and becomes a member. The secret is a credential kind of its own
// (ac_inv_…), so a leaked link is revoked by RFC 7009 or a leak report like any secret.
const (
	invitationKind     = "inv" // ac_inv_…
	invitationTTL      = 7 * 24 * time.Hour
	maxPending         = 100 // live invitations per project
	invitationsPerHour = 3   // mails to one address, from any project

	actionInvite       = "project.invitation_create"
	actionRevokeInvite = "project.invitation_revoke"
	actionMemberAdd    = "project.member_add"
)

var (
	errMailNotConfigured = apperr.New(apperr.KindUnavailable, "mail_not_configured", "mail is not configured on this server: invitations are mailed")
	errAlreadyInvited    = apperr.Conflict("already_invited", "this address has a pending invitation to this project: revoke it to invite again")
	errTooManyInvites    = apperr.Conflict("too_many_invitations", "a project has at most 100 pending invitations")
	errInvitesRateLimit  = apperr.New(apperr.KindRateLimited, "rate_limited", "this address was invited 3 times in the last hour; retry later").WithHeader("Retry-After", "3600")
	errInvitationGone    = apperr.NotFound("no pending invitation with that id in this project")
	errInvitationToken   = apperr.BadRequest("invalid_token", "the invitation is unknown, used, revoked or expired")
	errInvitationEmail   = apperr.New(apperr.KindForbidden, "invitation_email_mismatch", "this invitation is for another address: sign in with the invited address")
	errEmailNotVerified  = apperr.New(apperr.KindForbidden, "email_not_verified", "verify your email address first, then accept the invitation")
)

//go:embed templates
var templateFS embed.FS

// mails is the invitation; what users chose goes in quoted (platform/mail.Quote).
var mails = platformmail.MustTemplates(templateFS)

// Invitations keeps a project's invitations. It knows nothing of HTTP.
type Invitations struct {
	ent   *ent.Client
	clock clock.Clock
	audit *audit.Recorder
	mail  platformmail.Sender
	users identity.Users
	dir   identity.Directory
	log   *slog.Logger
	// self is the server's own URL: mailed links never follow a request's Host.
	self     string
	projects *Service
}

// Invitation is the public view of a pending invitation (never its secret).
type Invitation struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"projectId"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func invitationView(i *ent.Invitation) Invitation {
	return Invitation{ID: i.ID, ProjectID: i.ProjectID, Email: i.Email, Role: string(i.Role), CreatedBy: i.CreatedBy,
		CreatedAt: i.CreatedAt.UTC(), ExpiresAt: i.ExpiresAt.UTC()}
}

// Accepted is what accepting an invitation answers: the project and the new membership.
type Accepted struct {
	Project Project `json:"project"`
	Member  Member  `json:"member"`
}

// live narrows to invitations neither accepted, revoked nor expired.
func (s *Invitations) live() []predicate.Invitation {
	return []predicate.Invitation{invitation.AcceptedAtIsNil(), invitation.RevokedAtIsNil(), invitation.ExpiresAtGT(s.clock.Now())}
}

// Invite creates an invitation of email to projectID with role and mails its link.
func (s *Invitations) Invite(ctx context.Context, actorID, projectID, email, role string, origin audit.Origin) (Invitation, error) {
	if !s.mail.Configured() {
		return Invitation{}, errMailNotConfigured
	}
	if u, ok, err := s.dir.FindDashboardUser(ctx, "", email); err != nil {
		return Invitation{}, err
	} else if ok {
		member, err := s.ent.Membership.Query().Where(membership.ProjectID(projectID), membership.UserID(u.ID)).Exist(ctx)
		if err != nil {
			return Invitation{}, err
		}
		if member {
			return Invitation{}, errAlreadyMember
		}
	}
	token, err := secret.NewToken(invitationKind)
	if err != nil {
		return Invitation{}, err
	}
	now := s.clock.Now()
	var inv *ent.Invitation
	var projectName string
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		pending, err := tx.Invitation.Query().Where(invitation.ProjectID(projectID)).Where(s.live()...).All(ctx)
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
		recent, err := tx.Invitation.Query().Where(invitation.Email(email), invitation.CreatedAtGT(now.Add(-time.Hour))).Count(ctx)
		if err != nil {
			return err
		}
		if recent >= invitationsPerHour {
			return errInvitesRateLimit
		}
		p, err := tx.Project.Get(ctx, projectID)
		if err != nil {
			return err
		}
		projectName = p.Name
		inv, err = tx.Invitation.Create().SetProjectID(projectID).SetEmail(email).SetRole(invitation.Role(role)).
			SetDigest(secret.DigestOf(token).Bytes()).SetCreatedBy(actorID).SetCreatedAt(now).SetExpiresAt(now.Add(invitationTTL)).Save(ctx)
		if err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: &actorID, ProjectID: projectID, Action: actionInvite,
			Metadata: map[string]any{"invitationId": inv.ID, "email": email, "role": role}, Origin: origin})
		return err
	})
	if err != nil {
		return Invitation{}, err
	}
	s.send(ctx, inv, token, projectName, actorID)
	return invitationView(inv), nil
}

// send renders the invitation mail and queues it. The project's name and the inviter's
// address stand only quoted after their labels (SPEC §9b, N5).
func (s *Invitations) send(ctx context.Context, inv *ent.Invitation, token, projectName, inviterID string) {
	inviter := ""
	if p, err := s.users.Profile(ctx, inviterID); err == nil && p.Email != nil {
		inviter = platformmail.Quote(*p.Email)
	}
	data := map[string]any{"Project": platformmail.Quote(projectName), "InvitedBy": inviter, "Role": string(inv.Role),
		"Email": platformmail.Quote(inv.Email), "Link": s.self + "/console/invite?token=" + url.QueryEscape(token)}
	text, html, err := mails.Render("invitation", data)
	if err != nil {
		s.log.ErrorContext(ctx, "rendering the invitation mail", "error", err)
		return
	}
	if err := s.mail.Send(platformmail.Message{To: inv.Email, Subject: "You are invited to a project — authcore",
		Text: text, HTML: html, Purpose: "project_invitation"}); err != nil {
		// The invitation stands; the admin sees it listed and may revoke and invite again.
		s.log.WarnContext(ctx, "mail not queued", "purpose", "project_invitation", "error", err)
	}
}

// List is the project's pending invitations, newest first.
func (s *Invitations) List(ctx context.Context, projectID string) ([]Invitation, error) {
	rows, err := s.ent.Invitation.Query().Where(invitation.ProjectID(projectID)).Where(s.live()...).
		Order(invitation.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Invitation, len(rows))
	for i, r := range rows {
		out[i] = invitationView(r)
	}
	return out, nil
}

// Revoke ends one of the project's pending invitations, as its admin.
func (s *Invitations) Revoke(ctx context.Context, actorID, projectID, id string, origin audit.Origin) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		inv, err := tx.Invitation.Query().Where(invitation.ID(id), invitation.ProjectID(projectID)).Where(s.live()...).Only(ctx)
		if ent.IsNotFound(err) {
			return errInvitationGone
		}
		if err != nil {
			return err
		}
		return s.end(ctx, tx, inv, &actorID, "", actionRevokeInvite, nil, origin)
	})
}

// end revokes a live invitation within tx, audited as action.
func (s *Invitations) end(ctx context.Context, tx *ent.Tx, inv *ent.Invitation, actor *string, actorType audit.ActorType, action string, extra map[string]any,
	origin audit.Origin) error {
	n, err := tx.Invitation.Update().Where(invitation.ID(inv.ID)).Where(s.live()...).SetRevokedAt(s.clock.Now()).Save(ctx)
	if err != nil {
		return err
	}
	if n != 1 {
		return errInvitationGone
	}
	md := map[string]any{"invitationId": inv.ID, "email": inv.Email}
	for k, v := range extra {
		md[k] = v
	}
	_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ActorType: actorType, ProjectID: inv.ProjectID, Action: action, Metadata: md, Origin: origin})
	return err
}

// byToken is the invitation a presented secret names, live or not.
func (s *Invitations) byToken(ctx context.Context, token string) (*ent.Invitation, error) {
	if !secret.CheckToken(invitationKind, token) {
		return nil, errInvitationToken
	}
	inv, err := s.ent.Invitation.Query().Where(invitation.Digest(secret.DigestOf(token).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errInvitationToken
	}
	return inv, err
}

// revokePresented is the credential kind's Revoke: whoever holds the link may end it
// (RFC 7009, leak reports).
func (s *Invitations) revokePresented(ctx context.Context, token string, r credential.Revocation) error {
	inv, err := s.byToken(ctx, token)
	if err != nil {
		return credential.ErrNotLive
	}
	action := r.Action
	if action == "" {
		action = actionRevokeInvite
	}
	// The link's holder is a person without an account here yet: a user with no id.
	_, actorType := r.By(audit.ActorUser, "")
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error { return s.end(ctx, tx, inv, nil, actorType, action, r.Metadata, r.Origin) })
	if errors.Is(err, errInvitationGone) {
		return credential.ErrNotLive
	}
	return err
}

// Accept makes userID — who must hold the invited address, verified — a member with the
// invitation's role, and spends the invitation. Refusals other than an unknown or spent
// link leave it pending.
func (s *Invitations) Accept(ctx context.Context, userID, token string, origin audit.Origin) (Accepted, error) {
	inv, err := s.byToken(ctx, token)
	if err != nil {
		return Accepted{}, err
	}
	now := s.clock.Now()
	if inv.AcceptedAt != nil || inv.RevokedAt != nil || !inv.ExpiresAt.After(now) {
		return Accepted{}, errInvitationToken
	}
	prof, err := s.users.Profile(ctx, userID)
	if err != nil {
		return Accepted{}, err
	}
	if prof.Email == nil || identity.FoldEmail(*prof.Email) != identity.FoldEmail(inv.Email) {
		return Accepted{}, errInvitationEmail
	}
	if !prof.EmailVerified {
		return Accepted{}, errEmailNotVerified
	}
	var out Accepted
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.Invitation.Update().Where(invitation.ID(inv.ID)).Where(s.live()...).SetAcceptedAt(now).SetAcceptedBy(userID).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 { // accepted, revoked or expired since it was read
			return errInvitationToken
		}
		m, err := tx.Membership.Create().SetProjectID(inv.ProjectID).SetUserID(userID).SetRole(membership.Role(inv.Role)).Save(ctx)
		if ent.IsConstraintError(err) {
			return errAlreadyMember
		}
		if err != nil {
			return err
		}
		p, err := tx.Project.Get(ctx, inv.ProjectID)
		if err != nil {
			return err
		}
		email := inv.Email
		out = Accepted{Project: view(p, string(inv.Role)), Member: Member{UserID: userID, Email: &email, Role: string(inv.Role), CreatedAt: m.CreatedAt.UTC()}}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: &userID, ProjectID: inv.ProjectID, Action: actionMemberAdd,
			Metadata: map[string]any{"userId": userID, "role": string(inv.Role), "invitationId": inv.ID, "invitedBy": inv.CreatedBy}, Origin: origin})
		if err != nil {
			return err
		}
		return s.projects.memberChanged(ctx, tx, inv.ProjectID, userID)
	})
	return out, err
}
