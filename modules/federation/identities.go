package federation

import (
	"context"
	"slices"
	"time"

	"github.com/authcore/authcore/ent"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/signinprovider"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
)

// Identity is a linked identity as its owner sees it (GET /v1/auth-core/identities):
// never its tokens.
type Identity struct {
	ID            string     `json:"id"`
	ProviderID    string     `json:"providerId"`
	ProviderName  string     `json:"providerName"`
	Email         string     `json:"email"`
	EmailVerified bool       `json:"emailVerified"`
	CreatedAt     time.Time  `json:"createdAt"`
	LastUsedAt    *time.Time `json:"lastUsedAt"`
}

// linkedIdentities are the upstream identities linked to users: listed and unlinked by
// their users, and looked up by issuer and subject (identity.Linked).
type linkedIdentities struct {
	ent    *ent.Client
	store  *store
	users  identity.ProvenUsers
	second identity.SecondFactor // nil: no MFA module
	audit  *audit.Recorder
}

func (l linkedIdentities) identities(ctx context.Context, userID string) ([]Identity, error) {
	rows, err := l.ent.Identity.Query().Where(entidentity.UserID(userID)).Order(ent.Asc(entidentity.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Identity, 0, len(rows))
	for _, r := range rows {
		name := r.ProviderID
		if p, err := l.store.get(ctx, r.ProviderID); err == nil {
			name = p.Name
		}
		var last *time.Time
		if r.LastUsedAt != nil {
			t := r.LastUsedAt.UTC()
			last = &t
		}
		out = append(out, Identity{ID: r.ID, ProviderID: r.ProviderID, ProviderName: name, Email: r.Email, EmailVerified: r.EmailVerified,
			CreatedAt: r.CreatedAt.UTC(), LastUsedAt: last})
	}
	return out, nil
}

// LinkedUser is the tenant's user linked to subject of an enabled OpenID provider with
// that issuer; a tenant may configure one issuer twice (two clients), so any of them counts.
func (l linkedIdentities) LinkedUser(ctx context.Context, tenant, issuer, subject string) (string, bool, error) {
	providers, err := l.ent.SignInProvider.Query().Where(signinprovider.TenantID(tenant), signinprovider.Issuer(issuer),
		signinprovider.TypeEQ(signinprovider.TypeOidc), signinprovider.Enabled(true)).IDs(ctx)
	if err != nil || len(providers) == 0 {
		return "", false, err
	}
	row, err := l.ent.Identity.Query().Where(entidentity.ProviderIDIn(providers...), entidentity.Subject(subject)).First(ctx)
	if ent.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return row.UserID, true, nil
}

// unlink removes one of the user's identities, unless it is their last way to sign in
// (SPEC §20): a password, another identity of an enabled provider, the tenant's email
// link (with the address proven), or a passkey (which signs in alone) is another.
func (l linkedIdentities) unlink(ctx context.Context, userID, tenant, id string, origin audit.Origin) error {
	row, err := l.ent.Identity.Query().Where(entidentity.ID(id), entidentity.UserID(userID)).Only(ctx)
	if ent.IsNotFound(err) {
		return errIdentityNotFound
	}
	if err != nil {
		return err
	}
	other, err := l.otherWayIn(ctx, userID, tenant, row.ID)
	if err != nil {
		return err
	}
	if !other {
		return errLastMethod
	}
	return database.WithTx(ctx, l.ent, func(tx *ent.Tx) error {
		n, err := tx.Identity.Delete().Where(entidentity.ID(row.ID), entidentity.UserID(userID)).Exec(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errIdentityNotFound
		}
		_, err = l.audit.Record(ctx, tx, audit.Event{ActorID: &userID, ProjectID: tenant, Action: actionUnlink, Origin: origin,
			Metadata: map[string]any{"userId": userID, "identityId": row.ID, "providerId": row.ProviderID}})
		return err
	})
}

// otherWayIn reports whether the user can still sign in without identity except.
func (l linkedIdentities) otherWayIn(ctx context.Context, userID, tenant, except string) (bool, error) {
	acc, err := l.users.Account(ctx, userID)
	if err != nil {
		return false, err
	}
	m, err := l.store.methods(ctx, tenant)
	if err != nil {
		return false, err
	}
	if (acc.HasPassword && m.Password) || (m.EmailLink && acc.EmailVerified) {
		return true, nil
	}
	rows, err := l.ent.Identity.Query().Where(entidentity.UserID(userID), entidentity.IDNEQ(except)).All(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range rows {
		if p, err := l.store.get(ctx, r.ProviderID); err == nil && p.Enabled {
			return true, nil
		}
	}
	if l.second != nil {
		methods, err := l.second.Methods(ctx, userID)
		if err != nil {
			return false, err
		}
		if slices.Contains(methods, "passkey") {
			return true, nil
		}
	}
	return false, nil
}

// priorIdentities drops an account's linked identities when a mailed proof adopts it
// while unverified (identity.AddressProofs): an identity linked by whoever made the
// account without owning the address would otherwise stay a way in.
type priorIdentities struct{}

func (priorIdentities) DropPrior(ctx context.Context, tx *ent.Tx, userID string) (string, int, error) {
	n, err := tx.Identity.Delete().Where(entidentity.UserID(userID)).Exec(ctx)
	return "identities", n, err
}
