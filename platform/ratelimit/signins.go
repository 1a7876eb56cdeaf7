package ratelimit

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/secret"
)

// Per-account budget of failed sign-ins (SPEC §9, §9a): a bucket of 10 that refills one
// attempt every 90 s, so 10 failures per 15 minutes.
const (
	accountFailures = 10
	accountWindow   = 15 * time.Minute
	refillEvery     = accountWindow / accountFailures
)

// SignIns is the budget of failed sign-ins per account (tenant + email, known or not) and
// per device cookie, kept in the store: every replica spends the same budget. An attempt
// spends before the password is hashed and is refunded when it was not a wrong password,
// so parallel attempts cannot overdraw it (checking first and recording the failure after
// let 60 parallel guesses through where 10 were allowed).
//
// Hand-written over SQL because the budget must be one atomic step in a store shared by
// replicas; x/time/rate, used for the per-client budgets, lives in one process's memory.
type SignIns struct {
	db      *database.DB
	keys    *secret.Keyring
	clock   clock.Clock
	log     *slog.Logger
	on      bool
	refused *apperr.Error
}

func newSignIns(lc fx.Lifecycle, cfg config.Config, db *database.DB, keys *secret.Keyring, c clock.Clock, log *slog.Logger) *SignIns {
	s := &SignIns{db: db, keys: keys, clock: c, log: log, on: cfg.RateLimit > 0,
		refused: apperr.New(apperr.KindRateLimited, "rate_limited", "too many failed sign-ins for this account; retry later")}
	database.PruneEvery(lc, log, "sign-in budgets", 10*time.Minute, func(ctx context.Context) error {
		_, err := s.Prune(ctx)
		return err
	})
	return s
}

// Spend takes one attempt from key's budget, or answers 429 rate_limited with Retry-After
// when none is left. The refund it returns gives the attempt back: call it unless the
// attempt failed on a wrong secret.
func (s *SignIns) Spend(ctx context.Context, key string) (refund func(context.Context), err error) {
	if !s.on {
		return func(context.Context) {}, nil
	}
	id := s.keys.MAC("signin-budget", []byte(key))
	now := s.clock.Now().UnixMilli()
	rate := 1 / float64(refillEvery.Milliseconds())
	var left float64
	err = s.db.WriteRow(ctx, s.spendSQL(), []any{id, float64(accountFailures), now, rate}, &left)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, s.tooMany(ctx, id, now, rate)
	}
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) {
		if _, err := s.db.Exec(ctx, s.refundSQL(), id, float64(accountFailures)); err != nil {
			s.log.WarnContext(ctx, "refunding a sign-in attempt failed", "error", err)
		}
	}, nil
}

// tooMany is the 429, with the wait until one attempt has refilled.
func (s *SignIns) tooMany(ctx context.Context, id string, now int64, rate float64) error {
	var tokens float64
	var updated int64
	wait := refillEvery
	if err := s.db.SQL.QueryRowContext(ctx, s.readSQL(), id).Scan(&tokens, &updated); err == nil {
		current := math.Min(accountFailures, tokens+float64(max(0, now-updated))*rate)
		wait = time.Duration((1 - current) / rate * float64(time.Millisecond))
	}
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return s.refused.WithHeader("Retry-After", strconv.Itoa(secs))
}

// The bucket refills linearly from updated_at; the upsert spends one attempt only where at
// least one is left, in one statement, so the store serialises concurrent attempts.
const (
	spendPG = `INSERT INTO sign_in_budgets (id, tokens, updated_at) VALUES ($1, $2::float8 - 1, $3::bigint)
ON CONFLICT (id) DO UPDATE SET
  tokens = LEAST($2::float8, sign_in_budgets.tokens + GREATEST(0, $3::bigint - sign_in_budgets.updated_at) * $4::float8) - 1,
  updated_at = $3::bigint
WHERE LEAST($2::float8, sign_in_budgets.tokens + GREATEST(0, $3::bigint - sign_in_budgets.updated_at) * $4::float8) >= 1
RETURNING tokens`
	spendSQLite = `INSERT INTO sign_in_budgets (id, tokens, updated_at) VALUES (?1, ?2 - 1, ?3)
ON CONFLICT (id) DO UPDATE SET
  tokens = MIN(?2, sign_in_budgets.tokens + MAX(0, ?3 - sign_in_budgets.updated_at) * ?4) - 1,
  updated_at = ?3
WHERE MIN(?2, sign_in_budgets.tokens + MAX(0, ?3 - sign_in_budgets.updated_at) * ?4) >= 1
RETURNING tokens`
	refundPG     = `UPDATE sign_in_budgets SET tokens = LEAST($2::float8, tokens + 1) WHERE id = $1`
	refundSQLite = `UPDATE sign_in_budgets SET tokens = MIN(?2, tokens + 1) WHERE id = ?1`
	readPG       = `SELECT tokens, updated_at FROM sign_in_budgets WHERE id = $1`
	readSQLite   = `SELECT tokens, updated_at FROM sign_in_budgets WHERE id = ?1`
	prunePG      = `DELETE FROM sign_in_budgets WHERE updated_at < $1`
	pruneSQLite  = `DELETE FROM sign_in_budgets WHERE updated_at < ?1`
)

func (s *SignIns) pg() bool { return s.db.Storage == config.Postgres }

func (s *SignIns) spendSQL() string  { return pick(s.pg(), spendPG, spendSQLite) }
func (s *SignIns) refundSQL() string { return pick(s.pg(), refundPG, refundSQLite) }
func (s *SignIns) readSQL() string   { return pick(s.pg(), readPG, readSQLite) }

func pick(pg bool, a, b string) string {
	if pg {
		return a
	}
	return b
}

// Prune drops buckets untouched for a whole window: they are full again, which is what
// an absent bucket means.
func (s *SignIns) Prune(ctx context.Context) (int64, error) {
	res, err := s.db.Exec(ctx, pick(s.pg(), prunePG, pruneSQLite), s.clock.Now().Add(-accountWindow).UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
