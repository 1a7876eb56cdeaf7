package approval

import (
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/oauth"
)

// Errors of the backchannel authentication endpoint and grant (OpenID CIBA §13, §11; RFC
// 9396 §5), in the RFC 6749 style.
var (
	errUnknownUser = oauth.Error(apperr.KindInvalid, "unknown_user_id", "login_hint names no user of this project")
	errNoProject   = oauth.Error(apperr.KindInvalid, "unauthorized_client",
		"only a project's clients ask its people: an auth badge's client or an agent token")
	errBindingMessage = oauth.Error(apperr.KindInvalid, "invalid_binding_message",
		"binding_message is at most 100 characters, without control or format characters")
	errTooMany = oauth.Error(apperr.KindForbidden, "access_denied",
		"this client has 10 requests pending for this person: wait for their answers")
	errPending   = oauth.Error(apperr.KindInvalid, "authorization_pending", "the person has not answered yet")
	errSlowDown  = oauth.Error(apperr.KindInvalid, "slow_down", "polled sooner than the interval: the interval grows by 5 seconds")
	errDenied    = oauth.Error(apperr.KindInvalid, "access_denied", "the person denied the request")
	errChanged   = oauth.Error(apperr.KindInvalid, "access_denied", "the request's authorization details changed since the person saw them: no token is issued")
	errExpired   = oauth.Error(apperr.KindInvalid, "expired_token", "the request expired before the person approved it")
	errUnknownID = oauth.Error(apperr.KindInvalid, "invalid_grant", "auth_req_id is unknown, used, or another client's")
)

// invalidDetails is RFC 9396's error for authorization details the server refuses.
func invalidDetails(why string) *apperr.Error {
	return oauth.Error(apperr.KindInvalid, "invalid_authorization_details", why)
}

// Errors of the person's and the admins' routes.
var (
	errNoApproval     = apperr.NotFound("no such approval request of yours")
	errDecided        = apperr.Conflict("already_decided", "this request was answered already")
	errRequestExpired = apperr.Conflict("request_expired", "this request expired")
	errDetailsChanged = apperr.Conflict("details_changed",
		"the authorization details are not what you were shown (or their types changed since): reload and look again")
	errFresh = apperr.New(apperr.KindForbidden, "reauthentication_required",
		"approving needs an authentication within the last 5 minutes: confirm it is you")
	errTypeTaken   = apperr.Conflict("type_taken", "this project has registered this type already")
	errNoType      = apperr.NotFound("this project registered no such type")
	errTooManyKind = apperr.Conflict("too_many_types", "a project registers at most 50 types")
	errNoClient    = apperr.NotFound("no such client of this project")
)
