package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelclient"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/scope"
	"github.com/authcore/authcore/platform/secret"
)

// Bounds of a backchannel authentication request (SPEC §23).
const (
	maxExpiry         = 600 // seconds: requested_expiry is at most 10 minutes
	defaultExpiry     = 300
	maxBindingMessage = 100
	maxPending        = 10 // per client and person
	maxNotifyToken    = 1024
	// reqKind prefixes auth_req_id: ac_ciba_…, a secret (whoever holds it collects the
	// tokens, with the client's credentials), kept as its digest.
	reqKind = "ciba"
)

// Audit actions and webhook events of SPEC §23's approvals.
const (
	actionRequest = "oauth.backchannel_request"
	actionApprove = "oauth.backchannel_approve"
	actionDeny    = "oauth.backchannel_deny"
	actionToken   = "oauth.backchannel_token"
	actionCancel  = "oauth.backchannel_cancel"
)

// Started is the answer to a backchannel authentication request (CIBA §7.3).
type Started struct {
	AuthReqID string `json:"auth_req_id"`
	ExpiresIn int    `json:"expires_in"`
	Interval  int    `json:"interval"`
}

// pingSealed is what a ping sends, sealed on the request.
type pingSealed struct {
	NotificationToken string `json:"notificationToken"`
	AuthReqID         string `json:"authReqId"`
}

// Authorize is CIBA's backchannel authentication endpoint: a client of a project asks
// one of the project's people to approve what its authorization_details say.
func (s *service) Authorize(ctx context.Context, form url.Values, authorization string, origin audit.Origin) (Started, error) {
	cl, err := s.client(ctx, form, authorization, oauth.BackchannelPath)
	if err != nil {
		return Started{}, err
	}
	if err := repeated(form, "resource"); err != nil {
		return Started{}, err
	}
	// scope: OpenID's openid, and agent scopes the client holds (CIBA §7.1).
	given := strings.Fields(form.Get("scope"))
	requested, ok := scope.Parse(strings.Join(slices.DeleteFunc(slices.Clone(given), func(s string) bool { return s == "openid" }), " "))
	if !ok {
		return Started{}, oauth.ErrScopeGrammar
	}
	if !slices.Contains(given, "openid") {
		return Started{}, oauth.Error(apperr.KindInvalid, "invalid_scope", "scope must include openid (OpenID CIBA §7.1)")
	}
	targets, err := oauth.Targets(form, false)
	if err != nil {
		return Started{}, err
	}
	audience, bounds, err := oauth.Registered(ctx, s.resources, cl.ProjectID, targets)
	if err != nil {
		return Started{}, err
	}
	// Only what was asked for: with openid alone, the token carries no agent scope.
	scopes := []string{}
	if len(requested) > 0 {
		if _, ok := oauth.Narrow(cl.Scopes, requested, bounds); !ok {
			return Started{}, oauth.Error(apperr.KindInvalid, "invalid_scope", "scope must be covered by the client's scopes and by the resource's")
		}
		scopes = requested
	}
	hint := form.Get("login_hint")
	switch {
	case form.Get("login_hint_token") != "" || form.Get("id_token_hint") != "":
		return Started{}, oauth.InvalidRequest("only login_hint is supported: a user's email or id in the project")
	case hint == "":
		return Started{}, oauth.InvalidRequest("login_hint is required: a user's email or id in the project")
	case form.Get("user_code") != "":
		return Started{}, oauth.InvalidRequest("user_code is not supported")
	}
	binding := form.Get("binding_message")
	if utf8.RuneCountInString(binding) > maxBindingMessage || !utf8.ValidString(binding) ||
		strings.IndexFunc(binding, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0 {
		return Started{}, errBindingMessage
	}
	expiry := defaultExpiry
	if v := form.Get("requested_expiry"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxExpiry || strings.TrimLeft(v, "0123456789") != "" {
			return Started{}, oauth.InvalidRequest(fmt.Sprintf("requested_expiry is a whole number of seconds from 1 to %d", maxExpiry))
		}
		expiry = n
	}
	details, err := s.types.checkDetails(ctx, cl.ProjectID, form.Get("authorization_details"))
	if err != nil {
		return Started{}, err
	}
	mode, err := s.deliveryOf(ctx, cl)
	if err != nil {
		return Started{}, err
	}
	notify := form.Get("client_notification_token")
	if mode == backchannelrequest.DeliveryModePing && (notify == "" || len(notify) > maxNotifyToken) {
		return Started{}, oauth.InvalidRequest(fmt.Sprintf("client_notification_token is required (at most %d characters): this client takes pings", maxNotifyToken))
	}
	user, err := s.person(ctx, cl.ProjectID, hint)
	if err != nil {
		return Started{}, err
	}

	token, err := secret.NewToken(reqKind)
	if err != nil {
		return Started{}, err
	}
	now := s.clock.Now()
	id := schema.NewID(schema.BackchannelRequestIDPrefix)
	sealed := ""
	if mode == backchannelrequest.DeliveryModePing {
		b, _ := json.Marshal(pingSealed{NotificationToken: notify, AuthReqID: token})
		if sealed, err = sealedPing.Seal(s.keys, b, id); err != nil {
			return Started{}, err
		}
	}
	interval := s.interval()
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.BackchannelRequest.Query().Where(backchannelrequest.ClientID(cl.ID), backchannelrequest.UserID(user.ID),
			backchannelrequest.StatusEQ(backchannelrequest.StatusPending), backchannelrequest.ExpiresAtGT(now)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxPending {
			return errTooMany
		}
		if err := tx.BackchannelRequest.Create().SetID(id).SetProjectID(cl.ProjectID).SetClientID(cl.ID).SetClientName(cl.Name).
			SetUserID(user.ID).SetReqDigest(secret.DigestOf(token).Bytes()).SetScopes(scopes).SetAudience(nonNil(audience)).
			SetBindingMessage(binding).SetAuthorizationDetails(details.compact).SetTypeDigests(details.digests).
			SetDetailsDigest(detailsDigest(details.compact, details.digests)).SetStatus(backchannelrequest.StatusPending).
			SetInterval(int(interval / time.Second)).SetExpiresAt(now.Add(time.Duration(expiry) * time.Second)).
			SetDeliveryMode(mode).SetPingSealed(sealed).SetCreatedAt(now).Exec(ctx); err != nil {
			return err
		}
		client := cl.ID
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: &client, ActorType: audit.ClientActor(client), ProjectID: cl.ProjectID, Action: actionRequest, Origin: origin,
			Metadata: map[string]any{"requestId": id, "clientId": cl.ID, "userId": user.ID, "types": nonNil(details.types),
				"scope": strings.Join(scopes, " "), "bindingMessage": binding}})
		return err
	})
	if err != nil {
		return Started{}, err
	}
	s.mailPerson(ctx, user, cl, id, binding, now.Add(time.Duration(expiry)*time.Second))
	return Started{AuthReqID: token, ExpiresIn: expiry, Interval: int(interval / time.Second)}, nil
}

// detailsDigest names what a person approves: the details as sent and the version of
// each type's schema they were checked against.
func detailsDigest(compact string, digests map[string]string) string {
	var b strings.Builder
	b.WriteString(compact)
	types := make([]string, 0, len(digests))
	for t := range digests {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		b.WriteString("\n" + t + "=" + digests[t])
	}
	return digestOf(b.String())
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// deliveryOf is how the client takes its outcomes: ping when its project registered it
// so, else poll.
func (s *service) deliveryOf(ctx context.Context, cl oauth.Client) (backchannelrequest.DeliveryMode, error) {
	r, err := s.ent.BackchannelClient.Query().Where(backchannelclient.ProjectID(cl.ProjectID), backchannelclient.ClientID(cl.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return backchannelrequest.DeliveryModePoll, nil
	}
	if err != nil {
		return "", err
	}
	if r.DeliveryMode == backchannelclient.DeliveryModePing {
		return backchannelrequest.DeliveryModePing, nil
	}
	return backchannelrequest.DeliveryModePoll, nil
}

// person is the project's user login_hint names: their id or their email, in the
// project's tenant. Anyone else — a dashboard user, another project's — is unknown.
func (s *service) person(ctx context.Context, projectID, hint string) (identity.Account, error) {
	if strings.HasPrefix(hint, schema.UserIDPrefix) {
		acc, err := s.users.Account(ctx, hint)
		if err != nil || acc.TenantID != projectID {
			return identity.Account{}, errUnknownUser
		}
		return acc, nil
	}
	addr, err := mail.ParseAddress(hint)
	if err != nil || addr.Address != hint {
		return identity.Account{}, errUnknownUser
	}
	acc, ok, err := s.users.AccountByEmail(ctx, projectID, hint)
	if err != nil {
		return identity.Account{}, err
	}
	if !ok {
		return identity.Account{}, errUnknownUser
	}
	return acc, nil
}

// mailPerson tells the person a request waits for them, with a link to it on the console
// (their tenant's sign-in page first, when they are signed out). What others chose (the
// project's and the agent's names, the binding message) stands only quoted, after labels.
func (s *service) mailPerson(ctx context.Context, user identity.Account, cl oauth.Client, id, binding string, expires time.Time) {
	if !s.mail.Configured() || user.Email == "" {
		return
	}
	project := ""
	if s.tenants != nil {
		if name, ok, err := s.tenants.TenantName(ctx, cl.ProjectID); err == nil && ok {
			project = quote(name)
		}
	}
	agent := quote(cl.ID)
	if cl.Name != "" {
		agent = quote(cl.Name) + " (" + cl.ID + ")"
	}
	data := map[string]any{"Project": project, "Agent": agent, "Binding": quote(binding),
		"Expires": expires.UTC().Format(time.RFC1123),
		"Link":    s.self + "/console?tenant=" + url.QueryEscape(cl.ProjectID) + "#/approvals?request=" + url.QueryEscape(id)}
	text, html, err := mails.Render("approval", data)
	if err != nil {
		s.log.ErrorContext(ctx, "rendering the approval mail", "error", err)
		return
	}
	if err := s.mail.Send(mailMessage(user.Email, text, html)); err != nil {
		s.log.WarnContext(ctx, "mail not queued", "purpose", "approval_request", "error", err)
	}
}
