package account

import (
	"context"
	"embed"
	"log/slog"
	"net/url"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/ent/usertoken"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/secret"
)

// Account recovery and email verification (SPEC §14): single-use tokens mailed to the
// user, stored as digests.
const (
	resetKind    = "rst" // ac_rst_…
	verifyKind   = "evf" // ac_evf_…
	resetTTL     = 30 * time.Minute
	verifyTTL    = 24 * time.Hour
	mailsPerHour = 3 // of each purpose, per account: reset links and verification links
)

var (
	errMailNotConfigured = apperr.New(apperr.KindUnavailable, "mail_not_configured", "mail is not configured on this server")
	errInvalidToken      = apperr.BadRequest("invalid_token", "the token is unknown, used or expired")
)

//go:embed templates
var templateFS embed.FS

// mails are recovery and verification mails; html/template escapes what users supply (their
// display name) in the HTML part.
var mails = mail.MustTemplates(templateFS)

// Recovery runs the reset, change and verification flows. It is apart from Service because
// it needs the session engine, which needs Service.
type Recovery struct {
	users    *Service
	ent      *ent.Client
	clock    clock.Clock
	sessions identity.Sessions
	tenants  identity.Tenants // nil when only tenant "public" exists
	mail     mail.Sender
	audit    *audit.Recorder
	bus      invalidation.Bus
	log      *slog.Logger
	// self is the server's own URL (config.SelfURL): mailed links never follow a request's Host.
	self   string
	grants oauth.GrantEnder // nil without grants
	// prior are the other modules' ways into an account, dropped when a mailed proof
	// adopts an unverified one.
	prior []identity.PriorCredentials
}

var _ identity.AddressProofs = (*Recovery)(nil)

// Proven is identity.AddressProofs: the one rule of every mailed proof. An unverified
// account may have been made by someone who typed an address that is not theirs (a
// pre-account takeover); the mailbox's holder, proving it, becomes the account's only
// owner, so nothing set before the proof survives it — unless the proof came with a
// verified session of the account (sessionOf is its user), which shows that whoever set
// the password holds the mailbox too. The verified flag flips in the same statement that checks it, so two proofs racing drop
// once.
func (r *Recovery) Proven(ctx context.Context, tx *ent.Tx, userID, via, sessionOf string, origin audit.Origin) (bool, error) {
	u, err := tx.User.Get(ctx, userID)
	if err != nil {
		return false, err
	}
	if u.EmailVerified {
		return false, nil
	}
	own := sessionOf == userID
	upd := tx.User.Update().Where(user.ID(userID), user.EmailVerified(false)).SetEmailVerified(true)
	if !own {
		upd = upd.SetPasswordHash("")
	}
	if n, err := upd.Save(ctx); err != nil || n == 0 {
		return false, err
	}
	if own {
		return false, r.bus.Publish(ctx, tx, identity.ProfileTopic, userID)
	}
	dropped := map[string]any{"password": u.PasswordHash != ""}
	for _, p := range r.prior {
		kind, n, err := p.DropPrior(ctx, tx, userID)
		if err != nil {
			return false, err
		}
		dropped[kind] = n
	}
	if r.grants != nil {
		n, err := r.grants.EndGrants(ctx, tx, oauth.GrantsOf{UserID: userID}, oauth.GrantEnding{ActorID: &userID, Reason: "email_proven", Origin: origin})
		if err != nil {
			return false, err
		}
		dropped["grants"] = n
	}
	if _, err := r.audit.Record(ctx, tx, audit.Event{ActorID: &userID, ProjectID: u.TenantID, Action: "user.email_proven", Origin: origin,
		Metadata: map[string]any{"userId": userID, "via": via, "dropped": dropped}}); err != nil {
		return false, err
	}
	return true, r.bus.Publish(ctx, tx, identity.ProfileTopic, userID)
}

// endGrants ends every OAuth grant of the user in tx: a new password means the old one
// may have been known to someone, who may have approved apps with it (SPEC §9b).
func (r *Recovery) endGrants(ctx context.Context, tx *ent.Tx, userID, reason string, origin audit.Origin) error {
	if r.grants == nil {
		return nil
	}
	_, err := r.grants.EndGrants(ctx, tx, oauth.GrantsOf{UserID: userID}, oauth.GrantEnding{ActorID: &userID, Reason: reason, Origin: origin})
	return err
}

// Configured reports whether the flows that send mail can run.
func (r *Recovery) Configured() bool { return r.mail.Configured() }

// RequestReset mails a reset link to the account, if there is one, at most three times an
// hour. It answers the same, and does the same hashing, whether or not the account exists.
func (r *Recovery) RequestReset(ctx context.Context, tenant, email string) error {
	if !r.mail.Configured() {
		return errMailNotConfigured
	}
	token, err := secret.NewToken(resetKind)
	if err != nil {
		return err
	}
	digest := secret.DigestOf(token) // computed for unknown accounts too: the same work
	addr, _ := identity.NormalizeEmail(email)
	u, err := r.ent.User.Query().Where(user.TenantID(tenant), user.Email(addr)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return err
	}
	// The budget query runs for unknown accounts too (on an id that matches nothing), so
	// the answer's timing does not tell which accounts exist.
	id := "usr_none"
	if u != nil {
		id = u.ID
	}
	now := r.clock.Now()
	recent, err := r.ent.UserToken.Query().
		Where(usertoken.UserID(id), usertoken.PurposeEQ(usertoken.PurposeReset), usertoken.CreatedAtGT(now.Add(-time.Hour))).Count(ctx)
	if err != nil || u == nil || recent >= mailsPerHour {
		return err
	}
	if err := r.ent.UserToken.Create().SetUserID(u.ID).SetPurpose(usertoken.PurposeReset).SetDigest(digest.Bytes()).
		SetCreatedAt(now).SetExpiresAt(now.Add(resetTTL)).Exec(ctx); err != nil {
		return err
	}
	return r.send(ctx, u, "reset", "Reset your password", r.self+"/console/reset?token="+url.QueryEscape(token))
}

// Reset sets a new password with a reset token: it revokes every session of the user and
// every other outstanding reset token, and records user.password_reset. A weak password
// is refused before the token is looked at, so it is not consumed.
func (r *Recovery) Reset(ctx context.Context, token, password string, origin audit.Origin) error {
	if reason := checkPassword(password); reason != "" {
		return apperr.Validation(apperr.Issue{Field: "password", Reason: reason})
	}
	if !secret.CheckToken(resetKind, token) {
		return errInvalidToken
	}
	hash, err := r.users.hash.Hash(ctx, password)
	if err != nil {
		return err
	}
	var u *ent.User
	err = database.WithTx(ctx, r.ent, func(tx *ent.Tx) error {
		t, err := r.consume(ctx, tx, token, usertoken.PurposeReset)
		if err != nil {
			return err
		}
		if u, err = tx.User.UpdateOneID(t.UserID).SetPasswordHash(hash).Save(ctx); err != nil {
			return err
		}
		if err := tx.UserToken.Update().Where(usertoken.UserID(u.ID), usertoken.PurposeEQ(usertoken.PurposeReset), usertoken.UsedAtIsNil()).
			SetUsedAt(r.clock.Now()).Exec(ctx); err != nil {
			return err
		}
		if _, err = r.audit.Record(ctx, tx, audit.Event{ActorID: &u.ID, ProjectID: u.TenantID, Action: "user.password_reset",
			Metadata: map[string]any{"userId": u.ID}, Origin: origin}); err != nil {
			return err
		}
		return r.endGrants(ctx, tx, u.ID, "password_reset", origin)
	})
	if err != nil {
		return err
	}
	_, err = r.sessions.RevokeUser(ctx, u.ID, "")
	return err
}

// ChangePassword sets a new password for a signed-in user who knows the current one, and
// revokes the user's other sessions (keeping keep, the one making the request).
func (r *Recovery) ChangePassword(ctx context.Context, userID, keep, current, password string, origin audit.Origin) error {
	if reason := checkPassword(password); reason != "" {
		return apperr.Validation(apperr.Issue{Field: "password", Reason: reason})
	}
	u, err := r.ent.User.Get(ctx, userID)
	if err != nil {
		return err
	}
	ok, err := r.users.hash.Verify(ctx, current, u.PasswordHash)
	if err != nil {
		return err
	}
	if !ok || u.PasswordHash == "" { // no password to know (SPEC §20): a reset link sets one

		return errInvalidCredentials
	}
	hash, err := r.users.hash.Hash(ctx, password)
	if err != nil {
		return err
	}
	if err := database.WithTx(ctx, r.ent, func(tx *ent.Tx) error {
		if err := tx.User.UpdateOneID(userID).SetPasswordHash(hash).Exec(ctx); err != nil {
			return err
		}
		if _, err := r.audit.Record(ctx, tx, audit.Event{ActorID: &userID, ProjectID: u.TenantID, Action: audit.ActionPasswordChange,
			Metadata: map[string]any{"userId": userID}, Origin: origin}); err != nil {
			return err
		}
		return r.endGrants(ctx, tx, userID, "password_change", origin)
	}); err != nil {
		return err
	}
	_, err = r.sessions.RevokeUser(ctx, userID, keep)
	return err
}

// RequestVerification mails a verification link to the user's address (nothing when it
// is verified already), at most three times an hour like reset links: the address is the
// user's word, not yet proven, so an uncapped request would let anyone mail-bomb it.
func (r *Recovery) RequestVerification(ctx context.Context, userID string) error {
	if !r.mail.Configured() {
		return errMailNotConfigured
	}
	u, err := r.ent.User.Get(ctx, userID)
	if err != nil || u.EmailVerified {
		return err
	}
	token, err := secret.NewToken(verifyKind)
	if err != nil {
		return err
	}
	now := r.clock.Now()
	recent, err := r.ent.UserToken.Query().
		Where(usertoken.UserID(u.ID), usertoken.PurposeEQ(usertoken.PurposeVerify), usertoken.CreatedAtGT(now.Add(-time.Hour))).Count(ctx)
	if err != nil || recent >= mailsPerHour {
		return err
	}
	if err := r.ent.UserToken.Create().SetUserID(u.ID).SetPurpose(usertoken.PurposeVerify).SetDigest(secret.DigestOf(token).Bytes()).
		SetCreatedAt(now).SetExpiresAt(now.Add(verifyTTL)).Exec(ctx); err != nil {
		return err
	}
	return r.send(ctx, u, "verify", "Confirm your email address", r.self+"/console/verify?token="+url.QueryEscape(token))
}

// Verify marks the address of a verification token's user as verified. sessionOf is the
// user of the request's verified session, if any: a proof without the account's own
// session adopts an unverified account for the mailbox's holder (Proven), ending every
// session of it. dropped reports that the password and the rest were removed.
func (r *Recovery) Verify(ctx context.Context, token, sessionOf string, origin audit.Origin) (dropped bool, err error) {
	if !secret.CheckToken(verifyKind, token) {
		return false, errInvalidToken
	}
	var userID string
	err = database.WithTx(ctx, r.ent, func(tx *ent.Tx) error {
		t, err := r.consume(ctx, tx, token, usertoken.PurposeVerify)
		if err != nil {
			return err
		}
		userID = t.UserID
		dropped, err = r.Proven(ctx, tx, t.UserID, "email_verification", sessionOf, origin)
		return err
	})
	if err != nil || !dropped {
		return dropped, err
	}
	_, err = r.sessions.RevokeUser(ctx, userID, "")
	return dropped, err
}

// EmailVerified reports whether a user verified their address (the guard asks, when
// AUTHCORE_REQUIRE_VERIFIED_EMAIL is set).
func (r *Recovery) EmailVerified(ctx context.Context, userID string) (bool, error) {
	u, err := r.ent.User.Query().Where(user.ID(userID)).Select(user.FieldEmailVerified).Only(ctx)
	if ent.IsNotFound(err) {
		return false, nil
	}
	return err == nil && u.EmailVerified, err
}

// consume marks a live token of purpose used, exactly once: a replay, or two requests
// racing, find it used.
func (r *Recovery) consume(ctx context.Context, tx *ent.Tx, token string, purpose usertoken.Purpose) (*ent.UserToken, error) {
	now := r.clock.Now()
	t, err := tx.UserToken.Query().Where(usertoken.Digest(secret.DigestOf(token).Bytes()), usertoken.PurposeEQ(purpose),
		usertoken.UsedAtIsNil(), usertoken.ExpiresAtGT(now)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errInvalidToken
	}
	if err != nil {
		return nil, err
	}
	n, err := tx.UserToken.Update().Where(usertoken.ID(t.ID), usertoken.UsedAtIsNil()).SetUsedAt(now).Save(ctx)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, errInvalidToken
	}
	return t, nil
}

// send renders a mail from the templates and queues it. What users chose — their name,
// their project's name — appears only quoted after a label of its own (SPEC §9b, N5),
// never in the subject, a sentence or a line of its own: a name like "Click here:
// https://evil.example" reads as the name it is.
func (r *Recovery) send(ctx context.Context, u *ent.User, tmpl, subject, link string) error {
	project := ""
	if u.TenantID != identity.PublicTenant && r.tenants != nil {
		if name, ok, err := r.tenants.TenantName(ctx, u.TenantID); err == nil && ok {
			project = mail.Quote(name)
		}
	} else {
		subject += " — authcore" // the dashboard's mails name the service; a project's, nothing chosen by a user
	}
	name := ""
	if n := nameOf(u.Metadata); n != nil && *n != "" {
		name = mail.Quote(*n)
	}
	data := map[string]any{"Name": name, "Email": mail.Quote(u.Email), "Project": project, "Link": link}
	text, html, err := mails.Render(tmpl, data)
	if err != nil {
		return err
	}
	if err := r.mail.Send(mail.Message{To: u.Email, Subject: subject, Text: text, HTML: html, Purpose: tmpl}); err != nil {
		// The request still succeeds: what the caller sees must not depend on the mail.
		r.log.WarnContext(ctx, "mail not queued", "purpose", tmpl, "error", err)
	}
	return nil
}
