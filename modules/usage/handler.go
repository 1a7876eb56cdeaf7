package usage

import (
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
)

type handler struct {
	rec   *Recorder
	guard *guard.Guard
}

func (h *handler) routes() []httpserver.Route {
	member := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleViewer, guard.FromPath, nil)}
	return []httpserver.Route{{Method: http.MethodGet, Path: "/v1/projects/:id/usage", Handlers: append(member, h.usage)}}
}

// steps are the granularities, each with the most buckets a request may span.
var steps = map[string]struct {
	step time.Duration
	max  time.Duration
}{
	"minute": {time.Minute, 25 * time.Hour},
	"hour":   {time.Hour, 62 * 24 * time.Hour},
	"day":    {24 * time.Hour, 400 * 24 * time.Hour},
}

// usage answers a project's verification counts over time (SPEC §19): ?from&to (RFC 3339;
// the last 24 hours by default), granularity (minute, hour, day; hour by default),
// credentialId and kind to narrow.
func (h *handler) usage(c *fiber.Ctx) error {
	var issues []apperr.Issue
	g := c.Query("granularity", "hour")
	st, ok := steps[g]
	if !ok {
		issues = append(issues, apperr.Issue{Field: "granularity", Reason: "must be minute, hour or day"})
	}
	now := h.rec.clock.Now()
	parse := func(name string, def time.Time) time.Time {
		raw := c.Query(name)
		if raw == "" {
			return def
		}
		t, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			issues = append(issues, apperr.Issue{Field: name, Reason: "must be an RFC 3339 time"})
		}
		return t.UTC()
	}
	to := parse("to", now)
	from := parse("from", to.Add(-24*time.Hour))
	if len(issues) == 0 {
		from, to = from.Truncate(st.step), to.Truncate(st.step).Add(st.step)
		switch {
		case !from.Before(to):
			issues = append(issues, apperr.Issue{Field: "from", Reason: "must be before to"})
		case to.Sub(from) > st.max:
			issues = append(issues, apperr.Issue{Field: "to", Reason: "the range is too long for this granularity (minute: 25 hours, hour: 62 days, day: 400 days)"})
		}
	}
	if len(issues) > 0 {
		return apperr.Validation(issues...)
	}
	q := Query{ProjectID: guard.ProjectOf(c), Kind: strings.Clone(c.Query("kind")), CredentialID: strings.Clone(c.Query("credentialId")), From: from, To: to, Step: st.step}
	series, totals, err := h.rec.series(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"from": from, "to": to, "granularity": g, "series": series, "totals": totals})
}
