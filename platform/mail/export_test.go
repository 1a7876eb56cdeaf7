package mail

import "time"

// SetRetryWait shortens the pauses between attempts, for tests.
func SetRetryWait(m *Mailer, f func(n int) time.Duration) { m.retryWait = f }
