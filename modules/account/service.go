package account

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/tracing"
)

// Service owns users: creation, password checks and profile lookups. It knows nothing of
// HTTP or sessions.
type Service struct {
	ent   *ent.Client
	hash  *hasher
	audit *audit.Recorder
}

// NewService returns the account service.
func NewService(client *ent.Client, params argon2id.Params, tr *tracing.Tracing, rec *audit.Recorder) *Service {
	return &Service{ent: client, hash: newHasher(params, tr.Tracer("github.com/authcore/authcore/modules/account")), audit: rec}
}

var _ identity.Users = (*Service)(nil)

// User is the public view of an account: the user object of every sign-in answer,
// whichever way the user signed in (one type, so a password's and a provider's answers
// cannot drift apart).
type User = identity.Account

func view(u *ent.User) User {
	return User{ID: u.ID, TenantID: u.TenantID, Email: u.Email, Name: nameOf(u.Metadata), EmailVerified: u.EmailVerified,
		CreatedAt: u.CreatedAt.UTC(), HasPassword: u.PasswordHash != ""}
}

// nameOf reads metadata.name; anything unreadable is simply no name.
func nameOf(metadata string) *string {
	if s, ok := metadataOf(metadata)["name"].(string); ok {
		return &s
	}
	return nil
}

// metadataOf is the user's metadata object, or nil when it is not one.
func metadataOf(metadata string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(metadata), &m) != nil {
		return nil
	}
	return m
}

// SignUp is a validated sign-up request.
type SignUp struct {
	Email    string
	Password string
	Name     *string
	TenantID string
	// Origin is the request's, for the audit record.
	Origin audit.Origin
	// operator is an account an operator made (authcore users create), not a sign-up.
	operator bool
}

// Limits of SPEC §2.
const (
	minPassword = 8
	maxPassword = 256
	maxName     = 200
)

func checkPassword(p string) string {
	switch n := utf8.RuneCountInString(p); {
	case n < minPassword:
		return fmt.Sprintf("must be at least %d characters", minPassword)
	case n > maxPassword:
		return fmt.Sprintf("must be at most %d characters", maxPassword)
	}
	return ""
}

// Create makes a user, audited user.signup in its tenant's trail in the same transaction.
// The caller has checked that the tenant exists.
func (s *Service) Create(ctx context.Context, in SignUp) (User, error) {
	hash, err := s.hash.Hash(ctx, in.Password)
	if err != nil {
		return User{}, err
	}
	md := "{}"
	if in.Name != nil {
		b, _ := json.Marshal(map[string]string{"name": *in.Name})
		md = string(b)
	}
	var u *ent.User
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		if u, err = tx.User.Create().SetTenantID(in.TenantID).SetEmail(in.Email).SetPasswordHash(hash).SetMetadata(md).Save(ctx); err != nil {
			return err
		}
		ev := audit.Event{ActorID: &u.ID, ProjectID: u.TenantID, Action: audit.ActionSignUp, Origin: in.Origin,
			Metadata: map[string]any{"userId": u.ID, "method": audit.MethodPassword}}
		if in.operator {
			ev.ActorID, ev.ActorType, ev.Metadata["via"] = nil, audit.ActorSystem, "operator"
		}
		_, err := s.audit.Record(ctx, tx, ev)
		return err
	})
	if ent.IsConstraintError(err) {
		return User{}, errEmailTaken
	}
	if err != nil {
		return User{}, err
	}
	return view(u), nil
}

// Authenticate checks an email and password within a tenant. Every failure is the same
// invalid_credentials, after the same amount of hashing; known says the address names an
// account of the tenant (its failed sign-in is audited in its trail), and u is then that
// account even on a failure.
func (s *Service) Authenticate(ctx context.Context, tenantID, email, password string) (u User, known bool, err error) {
	addr, ok := identity.NormalizeEmail(email)
	var row *ent.User
	if ok {
		row, err = s.ent.User.Query().Where(user.TenantID(tenantID), user.Email(addr)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return User{}, false, err
		}
	}
	hash := ""
	if row != nil {
		hash = row.PasswordHash
	}
	match, err := s.hash.Verify(ctx, password, hash)
	if err != nil {
		return User{}, false, err
	}
	switch {
	case row == nil:
		return User{}, false, errInvalidCredentials
	// A user who never set a password (SPEC §20: signed up through a provider or a mailed
	// code) was compared with the dummy hash above, for the time; no password is theirs.
	case row.PasswordHash == "" || !match:
		return view(row), true, errInvalidCredentials
	case row.BlockedAt != nil:
		// Said only to whoever knows the password: a guesser learns nothing of the block.
		return view(row), true, errUserBlocked
	case row.DeprovisionedAt != nil:
		return view(row), true, errUserDeprovisioned
	}
	if NeedsRehash(row.PasswordHash) {
		// An imported hash (bcrypt, scrypt, PBKDF2, Firebase) is replaced by argon2id now that
		// the password is known. Conditional on the old hash, so a concurrent password change
		// is not overwritten; a failure here leaves the old hash working and the sign-in good.
		if fresh, err := s.hash.Hash(ctx, password); err == nil {
			_, _ = s.ent.User.Update().Where(user.ID(row.ID), user.PasswordHash(row.PasswordHash)).SetPasswordHash(fresh).Save(ctx)
		}
	}
	return view(row), true, nil
}

// Admit refuses a session to a blocked user, to one their org's directory deprovisioned
// (SPEC §27), and to one deleted since they proved who they are (identity.Users).
func (s *Service) Admit(ctx context.Context, userID string) error {
	u, err := s.ent.User.Query().Where(user.ID(userID)).Select(user.FieldBlockedAt, user.FieldDeprovisionedAt).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return errInvalidCredentials
	case err != nil:
		return err
	case u.BlockedAt != nil:
		return errUserBlocked
	case u.DeprovisionedAt != nil:
		return errUserDeprovisioned
	}
	return nil
}

// Recorded writes e in a transaction of its own: for the events that are no change of
// anything else (a sign-in, a failed one).
func (s *Service) Recorded(ctx context.Context, e audit.Event) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		_, err := s.audit.Record(ctx, tx, e)
		return err
	})
}

// Get is a user by id.
func (s *Service) Get(ctx context.Context, userID string) (User, error) {
	u, err := s.ent.User.Get(ctx, userID)
	if err != nil {
		return User{}, err
	}
	return view(u), nil
}

// Profile is the user's email and name for session/me.
func (s *Service) Profile(ctx context.Context, userID string) (identity.Profile, error) {
	u, err := s.ent.User.Query().Where(user.ID(userID)).Select(user.FieldEmail, user.FieldMetadata, user.FieldEmailVerified).Only(ctx)
	if err != nil {
		return identity.Profile{}, err
	}
	email := u.Email
	return identity.Profile{Email: &email, Name: nameOf(u.Metadata), EmailVerified: u.EmailVerified, Metadata: metadataOf(u.Metadata)}, nil
}

// FindUser is the id of the tenant's user with that email.
func (s *Service) FindUser(ctx context.Context, tenantID, email string) (string, bool, error) {
	addr, ok := identity.NormalizeEmail(email)
	if !ok {
		return "", false, nil
	}
	id, err := s.ent.User.Query().Where(user.TenantID(tenantID), user.Email(addr)).OnlyID(ctx)
	if ent.IsNotFound(err) {
		return "", false, nil
	}
	return id, err == nil, err
}

var _ identity.Directory = (*Service)(nil)

// FindDashboardUser finds a user of tenant "public" by id or by email.
func (s *Service) FindDashboardUser(ctx context.Context, id, email string) (identity.DashboardUser, bool, error) {
	q := s.ent.User.Query().Where(user.TenantID(identity.PublicTenant))
	if id != "" {
		q = q.Where(user.ID(id))
	} else {
		addr, ok := identity.NormalizeEmail(email)
		if !ok {
			return identity.DashboardUser{}, false, nil
		}
		q = q.Where(user.Email(addr))
	}
	u, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return identity.DashboardUser{}, false, nil
	}
	if err != nil {
		return identity.DashboardUser{}, false, err
	}
	return identity.DashboardUser{ID: u.ID, Email: u.Email}, true, nil
}

// Emails maps user ids to emails.
func (s *Service) Emails(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	us, err := s.ent.User.Query().Where(user.IDIn(ids...)).Select(user.FieldID, user.FieldEmail).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		out[u.ID] = u.Email
	}
	return out, nil
}

var _ identity.ProvenUsers = (*Service)(nil)

// Account is a user as the federation module sees it.
func (s *Service) Account(ctx context.Context, userID string) (identity.Account, error) {
	u, err := s.ent.User.Get(ctx, userID)
	if err != nil {
		return identity.Account{}, err
	}
	return view(u), nil
}

// AccountByEmail is the tenant's user with that address, if any.
func (s *Service) AccountByEmail(ctx context.Context, tenantID, email string) (identity.Account, bool, error) {
	addr, ok := identity.NormalizeEmail(email)
	if !ok {
		return identity.Account{}, false, nil
	}
	u, err := s.ent.User.Query().Where(user.TenantID(tenantID), user.Email(addr)).Only(ctx)
	if ent.IsNotFound(err) {
		return identity.Account{}, false, nil
	}
	if err != nil {
		return identity.Account{}, false, err
	}
	return view(u), true, nil
}

// CreateProven creates a user who proved their address (SPEC §20): verified, and without
// a password, which password sign-in then never matches.
func (s *Service) CreateProven(ctx context.Context, tx *ent.Tx, tenantID, email string, name *string) (identity.Account, error) {
	return s.createWithoutPassword(ctx, tx, tenantID, email, name, true)
}

// createWithoutPassword creates a user no password sign-in ever matches, its address
// proven or not.
func (s *Service) createWithoutPassword(ctx context.Context, tx *ent.Tx, tenantID, email string, name *string, verified bool) (identity.Account, error) {
	addr, ok := identity.NormalizeEmail(email)
	if !ok {
		return identity.Account{}, apperr.Validation(apperr.Issue{Field: "email", Reason: "not a valid email address"})
	}
	md := "{}"
	if name != nil {
		b, _ := json.Marshal(map[string]string{"name": *name})
		md = string(b)
	}
	u, err := tx.User.Create().SetTenantID(tenantID).SetEmail(addr).SetPasswordHash("").SetMetadata(md).SetEmailVerified(verified).Save(ctx)
	if ent.IsConstraintError(err) {
		return identity.Account{}, errEmailTaken
	}
	if err != nil {
		return identity.Account{}, err
	}
	return view(u), nil
}
