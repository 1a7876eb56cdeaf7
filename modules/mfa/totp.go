package mfa

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/mfafactor"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
)

// RFC 6238 as every authenticator app reads an otpauth:// URL: 30 s, 6 digits, SHA-1.
var totpOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// matchStep finds the time step within ±1 of now whose code is code (SPEC §17), comparing
// in constant time; the library computes the codes.
func matchStep(secretB32, code string, now time.Time) (int64, bool) {
	if len(code) != 6 {
		return 0, false
	}
	step := now.Unix() / int64(totpOpts.Period)
	for _, s := range []int64{step - 1, step, step + 1} {
		want, err := totp.GenerateCodeCustom(secretB32, time.Unix(s*int64(totpOpts.Period), 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// PendingTOTP is a TOTP secret shown once, to be confirmed with a code from the app.
type PendingTOTP struct {
	ID         string `json:"id"`
	Secret     string `json:"secret"`
	OtpauthURL string `json:"otpauthUrl"`
}

// BeginTOTP makes a pending TOTP factor: its secret is sealed at once, never stored plain.
func (e enrolment) BeginTOTP(ctx context.Context, userID, tenantID, name string) (PendingTOTP, error) {
	issuer := "authcore"
	if tenantID != identity.PublicTenant && e.tenants != nil {
		if n, ok, err := e.tenants.TenantName(ctx, tenantID); err == nil && ok {
			issuer = n
		}
	}
	account := userID
	if p, err := e.users.Profile(ctx, userID); err == nil && p.Email != nil {
		account = *p.Email
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account, Period: totpOpts.Period,
		Digits: totpOpts.Digits, Algorithm: totpOpts.Algorithm, SecretSize: 20})
	if err != nil {
		return PendingTOTP{}, err
	}
	id := schema.NewID(schema.MFAFactorIDPrefix)
	sealed, err := sealedTOTP.Seal(e.ring, []byte(key.Secret()), id)
	if err != nil {
		return PendingTOTP{}, err
	}
	if name == "" {
		name = "Authenticator app"
	}
	err = e.ent.MFAFactor.Create().SetID(id).SetUserID(userID).SetTenantID(tenantID).SetType(mfafactor.TypeTotp).
		SetName(name).SetSecretSealed(sealed).SetCreatedAt(e.clock.Now()).Exec(ctx)
	if err != nil {
		return PendingTOTP{}, err
	}
	return PendingTOTP{ID: id, Secret: key.Secret(), OtpauthURL: key.URL()}, nil
}

// Confirmed is a factor just added, with the recovery codes of a first factor.
type Confirmed struct {
	Factor        Factor   `json:"factor"`
	RecoveryCodes []string `json:"recoveryCodes,omitempty"`
}

// ConfirmTOTP makes a pending TOTP factor count once a current code from it checks out.
// The code's step is recorded: it cannot also sign in.
func (e enrolment) ConfirmTOTP(ctx context.Context, userID, factorID, code string, origin audit.Origin) (Confirmed, error) {
	now := e.clock.Now()
	var out Confirmed
	err := database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		f, err := tx.MFAFactor.Query().Where(mfafactor.ID(factorID), mfafactor.UserID(userID), mfafactor.TypeEQ(mfafactor.TypeTotp)).Only(ctx)
		if ent.IsNotFound(err) {
			return errFactorNotFound
		}
		if err != nil {
			return err
		}
		if f.ConfirmedAt != nil {
			return errAlreadyConfirmed
		}
		if !now.Before(f.CreatedAt.Add(pendingTOTPTTL)) {
			return errPendingExpired
		}
		secretB32, err := openSecret(e.ring, f)
		if err != nil {
			return err
		}
		step, ok := matchStep(secretB32, code, now)
		if !ok {
			return identity.ErrSecondFactor
		}
		n, err := tx.MFAFactor.Update().Where(mfafactor.ID(f.ID), mfafactor.ConfirmedAtIsNil()).
			SetConfirmedAt(now).SetLastStep(step).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errAlreadyConfirmed
		}
		f.ConfirmedAt, f.LastStep = &now, step
		codes, err := e.added(ctx, tx, f, origin)
		out = Confirmed{Factor: view(f), RecoveryCodes: codes}
		return err
	})
	return out, err
}
