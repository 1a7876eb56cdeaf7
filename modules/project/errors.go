package project

import "github.com/authcore/authcore/platform/apperr"

// The refusals of SPEC §2 for members.
var (
	errUserNotFound   = apperr.New(apperr.KindNotFound, "user_not_found", "no dashboard user with that email or id")
	errAlreadyMember  = apperr.Conflict("already_member", "that user is already a member of this project")
	errLastAdmin      = apperr.Conflict("last_admin", "a project must keep at least one admin")
	errMemberNotFound = apperr.NotFound("that user is not a member of this project")
)
