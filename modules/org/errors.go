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
	errRoleInUse     = apperr.Conflict("role_in_use", "members of the project's orgs hold a role this would remove: give them another role first")

	errDomainNotFound = apperr.NotFound("this org has no claim to this domain")
	// errDomainTaken: a project's domain is verified by at most one of its orgs (SPEC §26).
	errDomainTaken = apperr.Conflict("domain_taken", "another org of this project has verified this domain")
	// errNotProven answers every proof that failed; its "why" says which.
	errNotProven   = apperr.BadRequest("domain_not_proven", "the domain is not proven")
	errClaimRaced  = apperr.Conflict("claim_conflict", "this org claimed this domain at the same moment in another request: claim again")
	errCodesUsedUp = apperr.New(apperr.KindRateLimited, "too_many_attempts", "five codes were tried for this claim: claim the domain again an hour after the last claim")
	errNoMail      = apperr.New(apperr.KindUnavailable, "mail_not_configured", "mail is not configured on this server: prove the domain by DNS")
)
