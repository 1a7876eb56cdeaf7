package org

import "github.com/authcore/authcore/platform/apperr"

var (
	errOrgNotFound    = apperr.NotFound("no such org in this project")
	errMemberNotFound = apperr.NotFound("no such member of this org")
	// errUserNotFound answers a member to add who is not a user of the project's tenant: a
	// dashboard user or another project's user is not found either, so the answer says
	// nothing of who exists elsewhere.
	errUserNotFound  = apperr.NotFound("no such user in this project's tenant")
	errSlugTaken     = apperr.Conflict("slug_taken", "another org of this project has this slug")
	errAlreadyMember = apperr.Conflict("already_member", "the user is a member of this org already")
	errLastOwner     = apperr.Conflict("last_owner", "this is the org's last owner: make another member owner first")
	// errOwnerRequired answers an org admin who is not an owner and would grant, change or
	// take the owner role.
	errOwnerRequired = apperr.New(apperr.KindForbidden, "owner_required", "only an owner of the org may grant, change or remove the owner role")
	errRoleInUse     = apperr.Conflict("role_in_use", "members of the project's orgs hold a role this would remove: give them another role first")

	errDomainNotFound = apperr.NotFound("this org has no claim to this domain")
	// errDomainTaken: a project's domain is verified by at most one of its orgs (SPEC §26).
	errDomainTaken = apperr.Conflict("domain_taken", "another org of this project has verified this domain")
	// errNotProven answers every proof that failed; its "why" says which.
	errNotProven      = apperr.BadRequest("domain_not_proven", "the domain is not proven")
	errClaimRaced     = apperr.Conflict("claim_conflict", "this org claimed this domain at the same moment in another request: claim again")
	errMailedRecently = apperr.New(apperr.KindRateLimited, "too_many_attempts", "a code was mailed for this claim in the last five minutes: use it, or claim again later")
	errCodesUsedUp    = apperr.New(apperr.KindRateLimited, "too_many_attempts", "five codes were tried for this claim: claim the domain again an hour after the last claim")
	errNoMail         = apperr.New(apperr.KindUnavailable, "mail_not_configured", "mail is not configured on this server: prove the domain by DNS")
)

// The invitations' answers (SPEC §26). The accept route names each way a link fails, to
// its holder only: they hold the secret, so nothing is told to anyone else.
var (
	errMailNotConfigured = apperr.New(apperr.KindUnavailable, "mail_not_configured", "mail is not configured on this server: invitations are mailed")
	errAlreadyInvited    = apperr.Conflict("already_invited", "this address has a pending invitation to this org: revoke it to invite again")
	errTooManyInvites    = apperr.Conflict("too_many_invitations", "an org has at most 100 pending invitations")
	errInvitesRateLimit  = apperr.New(apperr.KindRateLimited, "rate_limited", "this project sent 20 org invitations in the last hour; retry later").
				WithHeader("Retry-After", "3600")
	errAddressRateLimit = apperr.New(apperr.KindRateLimited, "rate_limited", "this address was invited 3 times in the last hour; retry later").
				WithHeader("Retry-After", "3600")
	errInvitationGone    = apperr.NotFound("no pending invitation with that id in this org")
	errInvitationUnknown = apperr.NotFound("no such invitation in this tenant")
	errInvitationUsed    = apperr.Conflict("invitation_used", "this invitation has been accepted already")
	errInvitationRevoked = apperr.Conflict("invitation_revoked", "this invitation was revoked: ask for another")
	errInvitationExpired = apperr.Conflict("invitation_expired", "this invitation has expired: ask for another")
	errInvitationEmail   = apperr.New(apperr.KindForbidden, "invitation_email_mismatch", "this invitation is for another address: sign in with the invited address")
	errEmailNotVerified  = apperr.New(apperr.KindForbidden, "email_not_verified", "verify your email address first, then accept the invitation")
)
