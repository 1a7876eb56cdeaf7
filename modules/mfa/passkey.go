package mfa

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/mfachallenge"
	"github.com/authcore/authcore/ent/mfafactor"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

// newWebAuthn is the relying party of SPEC §17: its id is the public URL's host and its
// one origin the public URL's, never a request's. Browsers take no IP address for a
// relying party id, so a public URL on one leaves passkeys off (nil) and TOTP on.
func newWebAuthn(selfOrigin string) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(selfOrigin)
	if err != nil {
		return nil, err
	}
	if net.ParseIP(strings.Trim(u.Hostname(), "[]")) != nil {
		return nil, nil
	}
	return webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "authcore", RPOrigins: []string{selfOrigin}})
}

// waUser is a user as the WebAuthn library sees one: the user handle is the user id.
type waUser struct {
	id, name string
	creds    []webauthn.Credential
}

func (u *waUser) WebAuthnID() []byte                         { return []byte(u.id) }
func (u *waUser) WebAuthnName() string                       { return u.name }
func (u *waUser) WebAuthnDisplayName() string                { return u.name }
func (u *waUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// ceremonies keeps WebAuthn ceremonies between their begin and their finish, and reads
// users' passkeys: what enrolling a passkey and signing in with one share.
type ceremonies struct {
	ent   *ent.Client
	clock clock.Clock
	users identity.Users
}

// passkeyUser loads a user's passkeys.
func (cs ceremonies) passkeyUser(ctx context.Context, userID string) (*waUser, []*ent.MFAFactor, error) {
	u := &waUser{id: userID, name: userID}
	if p, err := cs.users.Profile(ctx, userID); err == nil && p.Email != nil {
		u.name = *p.Email
	}
	rows, err := cs.ent.MFAFactor.Query().Where(mfafactor.UserID(userID), mfafactor.TypeEQ(mfafactor.TypePasskey)).All(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rows {
		var c webauthn.Credential
		if r.Credential == nil || json.Unmarshal([]byte(*r.Credential), &c) != nil {
			continue
		}
		u.creds = append(u.creds, c)
	}
	return u, rows, nil
}

// ceremony is what a WebAuthn challenge row keeps between begin and finish.
type ceremony struct {
	Session webauthn.SessionData `json:"session"`
	Name    string               `json:"name,omitempty"`
}

func (cs ceremonies) saveCeremony(ctx context.Context, purpose mfachallenge.Purpose, tenantID string, userID *string, c ceremony) (string, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	id := schema.NewID(schema.MFAChallengeIDPrefix)
	return id, cs.ent.MFAChallenge.Create().SetID(id).SetPurpose(purpose).SetTenantID(tenantID).SetNillableUserID(userID).
		SetDigest(secret.DigestOf(c.Session.Challenge).Bytes()).SetData(string(data)).
		SetExpiresAt(cs.clock.Now().Add(challengeTTL)).Exec(ctx)
}

// takeCeremony finds the unexpired ceremony whose challenge the browser signed and spends
// it: a challenge answers one ceremony only.
func (cs ceremonies) takeCeremony(ctx context.Context, purpose mfachallenge.Purpose, challenge string) (*ent.MFAChallenge, ceremony, error) {
	var c ceremony
	row, err := cs.ent.MFAChallenge.Query().Where(mfachallenge.Digest(secret.DigestOf(challenge).Bytes()),
		mfachallenge.PurposeEQ(purpose), mfachallenge.ExpiresAtGT(cs.clock.Now())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, c, identity.ErrSecondFactor
	}
	if err != nil {
		return nil, c, err
	}
	n, err := cs.ent.MFAChallenge.Delete().Where(mfachallenge.ID(row.ID)).Exec(ctx)
	if err != nil {
		return nil, c, err
	}
	if n != 1 || json.Unmarshal([]byte(row.Data), &c) != nil {
		return nil, c, identity.ErrSecondFactor
	}
	return row, c, nil
}

// BeginRegistration answers the creation options for a new passkey of userID: a
// discoverable credential, excluding the ones the user has.
func (e enrolment) BeginRegistration(ctx context.Context, userID, tenantID, name string) (*protocol.CredentialCreation, error) {
	if e.webauthn == nil {
		return nil, errNoPasskeys
	}
	u, _, err := e.ceremonies.passkeyUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	exclude := make([]protocol.CredentialDescriptor, len(u.creds))
	for i := range u.creds {
		exclude[i] = u.creds[i].Descriptor()
	}
	opts, sess, err := e.webauthn.BeginRegistration(u,
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired),
		webauthn.WithExclusions(exclude))
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = "Passkey"
	}
	if _, err := e.ceremonies.saveCeremony(ctx, mfachallenge.PurposePasskeyRegister, tenantID, &userID, ceremony{Session: *sess, Name: name}); err != nil {
		return nil, err
	}
	return opts, nil
}

// FinishRegistration checks the browser's new credential against its ceremony and keeps it.
func (e enrolment) FinishRegistration(ctx context.Context, userID string, body []byte, origin audit.Origin) (Confirmed, error) {
	if e.webauthn == nil {
		return Confirmed{}, errNoPasskeys
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
	if err != nil {
		return Confirmed{}, errBadCredential
	}
	row, c, err := e.ceremonies.takeCeremony(ctx, mfachallenge.PurposePasskeyRegister, parsed.Response.CollectedClientData.Challenge)
	if err != nil {
		return Confirmed{}, err
	}
	if row.UserID == nil || *row.UserID != userID {
		return Confirmed{}, identity.ErrSecondFactor
	}
	u, _, err := e.ceremonies.passkeyUser(ctx, userID)
	if err != nil {
		return Confirmed{}, err
	}
	cred, err := e.webauthn.CreateCredential(u, c.Session, parsed)
	if err != nil {
		return Confirmed{}, errBadCredential
	}
	raw, err := json.Marshal(cred)
	if err != nil {
		return Confirmed{}, err
	}
	now := e.clock.Now()
	var out Confirmed
	err = database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		f, err := tx.MFAFactor.Create().SetUserID(userID).SetTenantID(row.TenantID).SetType(mfafactor.TypePasskey).
			SetName(c.Name).SetCredentialID(cred.ID).SetCredential(string(raw)).SetConfirmedAt(now).SetCreatedAt(now).Save(ctx)
		if ent.IsConstraintError(err) {
			return errPasskeyRegistered
		}
		if err != nil {
			return err
		}
		codes, err := e.added(ctx, tx, f, origin)
		out = Confirmed{Factor: view(f), RecoveryCodes: codes}
		return err
	})
	return out, err
}

// BeginPasskey answers request options for a sign-in or step-up by passkey (SPEC §9b).
// Without an mfaToken the options ask for any discoverable credential with user
// verification required, and the ceremony is unbound: the answer has one shape whoever
// asks, so it tells nothing of accounts or their credentials. With an mfaToken (the
// password step was passed) the ceremony is the second factor of that token's user, and a
// passkey that only proves presence is enough, as a security key without a PIN is.
func (s *Service) BeginPasskey(ctx context.Context, tenantID, mfaToken string) ([]byte, string, error) {
	if s.webauthn == nil {
		return nil, "", errNoPasskeys
	}
	var userID *string
	uv := protocol.VerificationRequired
	if mfaToken != "" {
		ch, err := s.signinChallenge(ctx, mfaToken)
		if err != nil {
			return nil, "", err
		}
		userID, tenantID, uv = ch.UserID, ch.TenantID, protocol.VerificationPreferred
	}
	opts, sess, err := s.webauthn.BeginDiscoverableLogin(webauthn.WithUserVerification(uv))
	if err != nil {
		return nil, "", err
	}
	id, err := s.ceremonies.saveCeremony(ctx, mfachallenge.PurposePasskeySignin, tenantID, userID, ceremony{Session: *sess})
	if err != nil {
		return nil, "", err
	}
	raw, err := json.Marshal(opts)
	return raw, id, err
}

// FinishPasskey signs in by passkey alone: the assertion names its user. A challengeID,
// when given, must be the ceremony's the assertion signed.
func (s *Service) FinishPasskey(ctx context.Context, challengeID string, assertion []byte) (string, []string, error) {
	userID, method, err := s.assert(ctx, assertion, "", challengeID, true)
	if err != nil {
		return "", nil, err
	}
	return userID, []string{method}, nil
}

// assert checks an assertion against the ceremony whose challenge it signed, updates the
// passkey's counter and last use, and answers its user and RFC 8176 method. want, when
// set, is the user the assertion must be from; challengeID the ceremony. verified asks
// for user verification (SPEC §9b: a passkey alone, or a step-up): the ceremony must have
// required it, so the library refuses an assertion without the UV flag.
func (s *Service) assert(ctx context.Context, assertion []byte, want, challengeID string, verified bool) (string, string, error) {
	if s.webauthn == nil {
		return "", "", errNoPasskeys
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(assertion)
	if err != nil {
		return "", "", identity.ErrSecondFactor
	}
	row, c, err := s.ceremonies.takeCeremony(ctx, mfachallenge.PurposePasskeySignin, parsed.Response.CollectedClientData.Challenge)
	if err != nil {
		return "", "", err
	}
	if challengeID != "" && challengeID != row.ID {
		return "", "", identity.ErrSecondFactor
	}
	if verified && c.Session.UserVerification != protocol.VerificationRequired {
		return "", "", identity.ErrSecondFactor
	}
	factor, err := s.ent.MFAFactor.Query().Where(mfafactor.CredentialID(parsed.RawID), mfafactor.TypeEQ(mfafactor.TypePasskey)).Only(ctx)
	if ent.IsNotFound(err) {
		return "", "", identity.ErrSecondFactor
	}
	if err != nil {
		return "", "", err
	}
	if factor.TenantID != row.TenantID || (row.UserID != nil && *row.UserID != factor.UserID) || (want != "" && want != factor.UserID) {
		return "", "", identity.ErrSecondFactor
	}
	u, _, err := s.ceremonies.passkeyUser(ctx, factor.UserID)
	if err != nil {
		return "", "", err
	}
	var cred *webauthn.Credential
	if len(c.Session.UserID) > 0 {
		cred, err = s.webauthn.ValidateLogin(u, c.Session, parsed)
	} else {
		_, cred, err = s.webauthn.ValidatePasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
			if string(handle) != u.id {
				return nil, errors.New("user handle names another user")
			}
			return u, nil
		}, c.Session, parsed)
	}
	if err != nil {
		return "", "", identity.ErrSecondFactor
	}
	if cred.Authenticator.CloneWarning {
		s.log.WarnContext(ctx, "passkey signature counter went backwards: possibly cloned", "factor", factor.ID, "user", factor.UserID)
		return "", "", identity.ErrSecondFactor
	}
	raw, err := json.Marshal(cred)
	if err != nil {
		return "", "", err
	}
	if err := s.ent.MFAFactor.UpdateOne(factor).SetCredential(string(raw)).SetLastUsedAt(s.clock.Now()).Exec(ctx); err != nil {
		return "", "", err
	}
	// A passkey that may be synced to other devices lives in software somewhere; one that
	// may not is bound to its hardware (RFC 8176's swk and hwk).
	method := "hwk"
	if cred.Flags.BackupEligible {
		method = "swk"
	}
	return factor.UserID, method, nil
}
