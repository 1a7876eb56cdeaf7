package approval

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/secret"
)

// defaultInterval is the least time between polls when AUTHCORE_BACKCHANNEL_INTERVAL is
// unset (CIBA §7.3's own default).
const defaultInterval = 5 * time.Second

// retention is how long a request is kept after it expired: the person's list and the
// audit trail name it meanwhile.
const retention = 24 * time.Hour

// service is SPEC §23's approvals: registered detail types, backchannel requests, the
// person's decisions and the tokens they give. It knows neither Fiber nor fx.
type service struct {
	ent       *ent.Client
	clock     clock.Clock
	audit     *audit.Recorder
	keys      *secret.Keyring
	users     identity.ProvenUsers
	tenants   identity.Tenants // nil without the project module
	mail      mail.Sender
	log       *slog.Logger
	auth      oauth.ClientAuthenticator
	agents    oauth.Agents // nil without agent tokens
	signer    oauth.Signer
	resources resource.Registry
	policy    outbound.Policy
	pings     *pinger
	cfg       config.Config
	// self is the server's own URL: mailed links never follow a request's Host.
	self  string
	types detailTypes
}

func (s *service) interval() time.Duration {
	return cmp.Or(s.cfg.BackchannelInterval, defaultInterval)
}

// cancel is RFC 7009 for an auth_req_id (its client withdraws the request): a pending
// request is denied, and nothing else changes.
func (s *service) cancel(ctx context.Context, token string, r credential.Revocation) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		row, err := tx.BackchannelRequest.Query().Where(backchannelrequest.ReqDigest(secret.DigestOf(token).Bytes())).Only(ctx)
		if ent.IsNotFound(err) {
			return credential.ErrNotLive
		}
		if err != nil {
			return err
		}
		now := s.clock.Now()
		n, err := tx.BackchannelRequest.Update().Where(backchannelrequest.ID(row.ID), backchannelrequest.StatusEQ(backchannelrequest.StatusPending),
			backchannelrequest.ExpiresAtGT(now)).SetStatus(backchannelrequest.StatusDenied).SetDecidedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return credential.ErrNotLive
		}
		md := map[string]any{"requestId": row.ID, "clientId": row.ClientID, "userId": row.UserID}
		for k, v := range r.Metadata {
			md[k] = v
		}
		actor, actorType := r.By(audit.ClientActor(row.ClientID), row.ClientID)
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ActorType: actorType, ProjectID: row.ProjectID, Action: cmp.Or(r.Action, actionCancel),
			Metadata: md, Origin: r.Origin})
		return err
	})
}

// kind is the auth_req_id's place in the credential registry: its prefix is claimed, its
// client may withdraw it by RFC 7009, and the approvals' webhook events are its.
func (s *service) kind() credential.Kind {
	return credential.Kind{Name: "backchannel_request", Prefix: secret.Prefix(reqKind), Revoke: s.cancel,
		Events: []string{actionRequest, actionApprove, actionDeny}}
}

// prune deletes requests a day after they expired.
func (s *service) prune(ctx context.Context) error {
	_, err := s.ent.BackchannelRequest.Delete().Where(backchannelrequest.ExpiresAtLT(s.clock.Now().Add(-retention))).Exec(ctx)
	return err
}

// metadata is what SPEC §23 adds to the authorization server's metadata (CIBA §4, RFC
// 9396 §10). Types are a project's own, so the server-wide document names none: a
// project's are at GET /v1/projects/{id}/oauth/authorization-details.
func metadata(issuer string) map[string]any {
	return map[string]any{
		"backchannel_authentication_endpoint":        issuer + oauth.BackchannelPath,
		"backchannel_token_delivery_modes_supported": []string{"poll", "ping"},
		"backchannel_user_code_parameter_supported":  false,
		"authorization_details_types_supported":      []string{},
	}
}
