package mfa

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/mfachallenge"
	"github.com/authcore/authcore/ent/mfafactor"
	"github.com/authcore/authcore/ent/mfarecoverycode"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/secret"
)

// Lifetimes of SPEC §17's steps in flight.
const (
	challengeTTL   = 5 * time.Minute  // an mfaToken, a WebAuthn ceremony
	pendingTOTPTTL = 10 * time.Minute // a TOTP secret shown but not yet confirmed
	enrolledTTL    = 30 * time.Second // safety net when a NOTIFY is lost; changes invalidate at once
	mfaTokenKind   = "mft"
)

// Audit actions (and webhook event types) of SPEC §17.
const (
	actionEnrol        = "user.mfa_enrol"
	actionRemove       = "user.mfa_remove"
	actionRecoveryUsed = "user.mfa_recovery_used"
)

// Methods a user can have, as Methods reports them.
const (
	methodTOTP     = "totp"
	methodPasskey  = "passkey"
	methodRecovery = "recovery_code"
)

// Service keeps users' second factors and checks them. It knows nothing of HTTP.
type Service struct {
	ent      *ent.Client
	ring     *secret.Keyring
	clock    clock.Clock
	audit    *audit.Recorder
	webauthn *webauthn.WebAuthn
	log      *slog.Logger
	enrolled *bearer.Cache[string, bool]

	ceremonies ceremonies
	enrol      enrolment
}

// enrolment adds and removes a user's factors (TOTP apps, passkeys) and replaces their
// recovery codes; Service checks them.
type enrolment struct {
	ent        *ent.Client
	ring       *secret.Keyring
	clock      clock.Clock
	bus        invalidation.Bus
	audit      *audit.Recorder
	users      identity.Users
	tenants    identity.Tenants // nil when only "public" exists
	webauthn   *webauthn.WebAuthn
	ceremonies ceremonies
}

var (
	_ identity.Factors      = (*Service)(nil)
	_ identity.SecondFactor = (*Service)(nil)
)

// Factor is the public view of a confirmed factor.
type Factor struct {
	ID         string     `json:"id"`
	Type       string     `json:"type"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

func view(f *ent.MFAFactor) Factor {
	v := Factor{ID: f.ID, Type: f.Type.String(), Name: f.Name, CreatedAt: f.CreatedAt.UTC()}
	if f.LastUsedAt != nil {
		t := f.LastUsedAt.UTC()
		v.LastUsedAt = &t
	}
	return v
}

// Overview is GET /v1/auth-core/mfa.
type Overview struct {
	Factors           []Factor `json:"factors"`
	RecoveryCodesLeft int      `json:"recoveryCodesLeft"`
}

// factors are a user's factors that count: every passkey, and TOTP apps once a code from
// them was confirmed.
func (s *Service) factors(ctx context.Context, userID string) ([]*ent.MFAFactor, error) {
	return s.ent.MFAFactor.Query().Where(mfafactor.UserID(userID), mfafactor.ConfirmedAtNotNil()).
		Order(ent.Asc(mfafactor.FieldID)).All(ctx)
}

// Overview lists a user's factors and how many recovery codes are left.
func (s *Service) Overview(ctx context.Context, userID string) (Overview, error) {
	fs, err := s.factors(ctx, userID)
	if err != nil {
		return Overview{}, err
	}
	left, err := s.ent.MFARecoveryCode.Query().Where(mfarecoverycode.UserID(userID), mfarecoverycode.UsedAtIsNil()).Count(ctx)
	if err != nil {
		return Overview{}, err
	}
	out := Overview{Factors: make([]Factor, 0, len(fs)), RecoveryCodesLeft: left}
	for _, f := range fs {
		out.Factors = append(out.Factors, view(f))
	}
	return out, nil
}

// Enrolled reports whether userID has a confirmed factor; cached, and invalidated on every
// replica when a factor is added or removed.
func (s *Service) Enrolled(ctx context.Context, userID string) (bool, error) {
	return s.enrolled.Load(ctx, userID, func(ctx context.Context) (bool, error) {
		return s.ent.MFAFactor.Query().Where(mfafactor.UserID(userID), mfafactor.ConfirmedAtNotNil()).Exist(ctx)
	})
}

// Methods lists the kinds of factor a user can sign in with.
func (s *Service) Methods(ctx context.Context, userID string) ([]string, error) {
	fs, err := s.factors(ctx, userID)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	var out []string
	for _, f := range fs {
		if t := f.Type.String(); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	left, err := s.ent.MFARecoveryCode.Query().Where(mfarecoverycode.UserID(userID), mfarecoverycode.UsedAtIsNil()).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if left {
		out = append(out, methodRecovery)
	}
	return out, nil
}

// Challenge starts a sign-in's second step.
func (s *Service) Challenge(ctx context.Context, userID, tenantID string) (string, error) {
	tok, err := secret.NewToken(mfaTokenKind)
	if err != nil {
		return "", err
	}
	err = s.ent.MFAChallenge.Create().SetPurpose(mfachallenge.PurposeSignin).SetTenantID(tenantID).SetUserID(userID).
		SetDigest(secret.DigestOf(tok).Bytes()).SetExpiresAt(s.clock.Now().Add(challengeTTL)).Exec(ctx)
	return tok, err
}

func (s *Service) signinChallenge(ctx context.Context, mfaToken string) (*ent.MFAChallenge, error) {
	if !secret.CheckToken(mfaTokenKind, mfaToken) {
		return nil, errMFAToken
	}
	ch, err := s.ent.MFAChallenge.Query().Where(mfachallenge.Digest(secret.DigestOf(mfaToken).Bytes()),
		mfachallenge.PurposeEQ(mfachallenge.PurposeSignin), mfachallenge.ExpiresAtGT(s.clock.Now())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errMFAToken
	}
	return ch, err
}

// Peek names the user of an unexpired mfaToken.
func (s *Service) Peek(ctx context.Context, mfaToken string) (string, string, error) {
	ch, err := s.signinChallenge(ctx, mfaToken)
	if err != nil {
		return "", "", err
	}
	return *ch.UserID, ch.TenantID, nil
}

// Complete checks proof for the mfaToken's user, then spends the token: of two concurrent
// completions only one starts a session.
func (s *Service) Complete(ctx context.Context, mfaToken string, proof identity.Proof) (string, []string, error) {
	ch, err := s.signinChallenge(ctx, mfaToken)
	if err != nil {
		return "", nil, err
	}
	// After a password, a passkey may be the second factor on presence alone (SPEC §9b).
	method, err := s.verify(ctx, *ch.UserID, ch.TenantID, proof, audit.Origin{}, false)
	if err != nil {
		return "", nil, err
	}
	n, err := s.ent.MFAChallenge.Delete().Where(mfachallenge.ID(ch.ID)).Exec(ctx)
	if err != nil {
		return "", nil, err
	}
	if n != 1 {
		return "", nil, errMFAToken
	}
	return *ch.UserID, []string{"pwd", method, "mfa"}, nil
}

// Verify checks a second factor of userID for a step-up and answers its RFC 8176 method:
// "otp" for a TOTP or recovery code, "hwk" or "swk" for a passkey, which must have
// verified its user (SPEC §9b). A failure is ErrSecondFactor.
func (s *Service) Verify(ctx context.Context, userID, tenantID string, proof identity.Proof, origin audit.Origin) (string, error) {
	return s.verify(ctx, userID, tenantID, proof, origin, true)
}

// verify is Verify; verified asks a passkey for user verification.
func (s *Service) verify(ctx context.Context, userID, tenantID string, proof identity.Proof, origin audit.Origin, verified bool) (string, error) {
	switch {
	case proof.Code != "":
		return "otp", s.checkCode(ctx, userID, proof.Code)
	case proof.RecoveryCode != "":
		return "otp", s.useRecoveryCode(ctx, userID, tenantID, proof.RecoveryCode, origin)
	case len(proof.Assertion) > 0:
		got, method, err := s.assert(ctx, proof.Assertion, userID, "", verified)
		if err == nil && got != userID {
			err = identity.ErrSecondFactor
		}
		return method, err
	}
	return "", identity.ErrSecondFactor
}

// checkCode accepts a code of any of the user's confirmed TOTP apps, each time step once.
func (s *Service) checkCode(ctx context.Context, userID, code string) error {
	fs, err := s.ent.MFAFactor.Query().Where(mfafactor.UserID(userID), mfafactor.TypeEQ(mfafactor.TypeTotp),
		mfafactor.ConfirmedAtNotNil()).All(ctx)
	if err != nil {
		return err
	}
	for _, f := range fs {
		ok, err := s.useCode(ctx, f, code)
		if err != nil || ok {
			return err
		}
	}
	return identity.ErrSecondFactor
}

// useCode accepts code for f when it matches a step within ±1 of now that is later than
// the last one accepted, and records that step: the conditional update lets only one of
// two concurrent uses of a code through.
func (s *Service) useCode(ctx context.Context, f *ent.MFAFactor, code string) (bool, error) {
	secretB32, err := openSecret(s.ring, f)
	if err != nil {
		return false, err
	}
	now := s.clock.Now()
	step, ok := matchStep(secretB32, code, now)
	if !ok || step <= f.LastStep {
		return false, nil
	}
	n, err := s.ent.MFAFactor.Update().Where(mfafactor.ID(f.ID), mfafactor.LastStepLT(step)).
		SetLastStep(step).SetLastUsedAt(now).Save(ctx)
	return n == 1, err
}

func openSecret(ring *secret.Keyring, f *ent.MFAFactor) (string, error) {
	if f.SecretSealed == nil {
		return "", errors.New("totp factor without a secret: " + f.ID)
	}
	b, err := ring.Open(*f.SecretSealed, []byte(f.ID))
	return string(b), err
}

// useRecoveryCode spends one of the user's recovery codes.
func (s *Service) useRecoveryCode(ctx context.Context, userID, tenantID, code string, origin audit.Origin) error {
	d := recoveryDigest(code)
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.MFARecoveryCode.Update().
			Where(mfarecoverycode.UserID(userID), mfarecoverycode.Digest(d), mfarecoverycode.UsedAtIsNil()).
			SetUsedAt(s.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return identity.ErrSecondFactor
		}
		left, err := tx.MFARecoveryCode.Query().Where(mfarecoverycode.UserID(userID), mfarecoverycode.UsedAtIsNil()).Count(ctx)
		if err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: &userID, ProjectID: tenantID, Action: actionRecoveryUsed,
			Metadata: map[string]any{"userId": userID, "recoveryCodesLeft": left}, Origin: origin})
		return err
	})
}

// recoveryAlphabet is Crockford's base32 without the letters people misread.
const recoveryAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// newRecoveryCodes makes ten codes of 60 random bits each (xxxxx-xxxxx-xx).
func newRecoveryCodes() ([]string, error) {
	out := make([]string, 10)
	for i := range out {
		s, err := secret.RandomString(12, recoveryAlphabet)
		if err != nil {
			return nil, err
		}
		out[i] = s[:4] + "-" + s[4:8] + "-" + s[8:]
	}
	return out, nil
}

// recoveryDigest normalises what a person types (case, dashes, spaces) before hashing. The
// codes carry 60 random bits, so a fast digest is enough: no guess list can cover them.
func recoveryDigest(code string) []byte {
	norm := strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(code)))
	return secret.DigestOf(norm).Bytes()
}

// replaceRecoveryCodes writes a new set within tx, ending the old one.
func (e enrolment) replaceRecoveryCodes(ctx context.Context, tx *ent.Tx, userID string) ([]string, error) {
	codes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	if _, err := tx.MFARecoveryCode.Delete().Where(mfarecoverycode.UserID(userID)).Exec(ctx); err != nil {
		return nil, err
	}
	now := e.clock.Now()
	rows := make([]*ent.MFARecoveryCodeCreate, len(codes))
	for i, c := range codes {
		rows[i] = tx.MFARecoveryCode.Create().SetUserID(userID).SetDigest(recoveryDigest(c)).SetCreatedAt(now)
	}
	return codes, tx.MFARecoveryCode.CreateBulk(rows...).Exec(ctx)
}

// NewRecoveryCodes replaces a user's recovery codes; they must have a factor.
func (e enrolment) NewRecoveryCodes(ctx context.Context, userID string) ([]string, error) {
	ok, err := e.ent.MFAFactor.Query().Where(mfafactor.UserID(userID), mfafactor.ConfirmedAtNotNil()).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNoFactor
	}
	var codes []string
	err = database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		codes, err = e.replaceRecoveryCodes(ctx, tx, userID)
		return err
	})
	return codes, err
}

// added records a newly confirmed factor within tx: its audit record, a first set of
// recovery codes when it is the user's first factor, and the invalidation of the cached
// enrolment answer.
func (e enrolment) added(ctx context.Context, tx *ent.Tx, f *ent.MFAFactor, origin audit.Origin) ([]string, error) {
	others, err := tx.MFAFactor.Query().Where(mfafactor.UserID(f.UserID), mfafactor.ConfirmedAtNotNil(), mfafactor.IDNEQ(f.ID)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	var codes []string
	if !others {
		if codes, err = e.replaceRecoveryCodes(ctx, tx, f.UserID); err != nil {
			return nil, err
		}
	}
	if _, err := e.audit.Record(ctx, tx, audit.Event{ActorID: &f.UserID, ProjectID: f.TenantID, Action: actionEnrol,
		Metadata: map[string]any{"userId": f.UserID, "factorId": f.ID, "type": f.Type.String()}, Origin: origin}); err != nil {
		return nil, err
	}
	return codes, e.bus.Publish(ctx, tx, identity.FactorsTopic, f.UserID)
}

// Remove deletes a factor of userID. The last confirmed one takes the recovery codes with
// it, and only when recentForLast says the caller authenticated recently enough.
func (e enrolment) Remove(ctx context.Context, userID, factorID string, recentForLast bool, origin audit.Origin) error {
	return database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		f, err := tx.MFAFactor.Query().Where(mfafactor.ID(factorID), mfafactor.UserID(userID)).Only(ctx)
		if ent.IsNotFound(err) {
			return errFactorNotFound
		}
		if err != nil {
			return err
		}
		if f.ConfirmedAt == nil {
			return tx.MFAFactor.DeleteOne(f).Exec(ctx)
		}
		others, err := tx.MFAFactor.Query().Where(mfafactor.UserID(userID), mfafactor.ConfirmedAtNotNil(), mfafactor.IDNEQ(f.ID)).Exist(ctx)
		if err != nil {
			return err
		}
		if !others && !recentForLast {
			return errRecentForFactors
		}
		if err := tx.MFAFactor.DeleteOne(f).Exec(ctx); err != nil {
			return err
		}
		if !others {
			if _, err := tx.MFARecoveryCode.Delete().Where(mfarecoverycode.UserID(userID)).Exec(ctx); err != nil {
				return err
			}
		}
		if _, err := e.audit.Record(ctx, tx, audit.Event{ActorID: &userID, ProjectID: f.TenantID, Action: actionRemove,
			Metadata: map[string]any{"userId": userID, "factorId": f.ID, "type": f.Type.String(), "last": !others}, Origin: origin}); err != nil {
			return err
		}
		return e.bus.Publish(ctx, tx, identity.FactorsTopic, userID)
	})
}

// Prune deletes challenges past their life and TOTP secrets never confirmed.
func (s *Service) Prune(ctx context.Context) error {
	now := s.clock.Now()
	if _, err := s.ent.MFAChallenge.Delete().Where(mfachallenge.ExpiresAtLTE(now)).Exec(ctx); err != nil {
		return err
	}
	_, err := s.ent.MFAFactor.Delete().Where(mfafactor.ConfirmedAtIsNil(), mfafactor.CreatedAtLTE(now.Add(-pendingTOTPTTL))).Exec(ctx)
	return err
}
