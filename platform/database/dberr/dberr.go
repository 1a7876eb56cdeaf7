// Package dberr tells a store that cannot be reached from a store that answered with an
// error. It is its own package so the HTTP layer can map it to 503 without importing the
// database module.
package dberr

import (
	"database/sql/driver"
	"errors"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable is returned for every query while the store is not migrated or cannot be
// reached. The HTTP error handler answers it with 503 unavailable (SPEC §4).
var ErrUnavailable = errors.New("store unavailable")

// IsUnavailable reports whether err means the store cannot be reached, as opposed to a
// query that the store answered with an error.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	var netErr *net.OpError
	if errors.As(err, &netErr) {
		return true
	}
	// pgx reports a connection lost mid-query this way.
	if pgconn.SafeToRetry(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// admin_shutdown, crash_shutdown, cannot_connect_now
		switch pgErr.Code {
		case "57P01", "57P02", "57P03":
			return true
		}
	}
	return false
}
