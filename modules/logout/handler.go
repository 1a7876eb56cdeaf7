package logout

import (
	"context"
	"net/http"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/logoutdelivery"
	"github.com/authcore/authcore/ent/oauthclient"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
)

type handler struct {
	svc   *Service
	guard *guard.Guard
}

func (h *handler) routes() []httpserver.Route {
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	return []httpserver.Route{
		{Method: http.MethodGet, Path: "/v1/projects/:id/apps/:appId/logout-deliveries", Handlers: append(admin, h.deliveries)},
	}
}

// Delivery is a logout token owed to an app, as its admins see it.
type Delivery struct {
	ID             string     `json:"id"`
	SessionHandle  string     `json:"sid"`
	UserID         string     `json:"userId"`
	URL            string     `json:"url"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt"`
	LastStatusCode *int       `json:"lastStatusCode"`
	LastError      *string    `json:"lastError"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	DeliveredAt    *time.Time `json:"deliveredAt"`
	CreatedAt      time.Time  `json:"createdAt"`
}

var errNoApp = apperr.NotFound("no such app in this project")

// deliveries lists an app's back-channel logout deliveries, newest first (limit,
// before: a keyset cursor).
func (h *handler) deliveries(c *fiber.Ctx) error {
	limit := httpserver.QueryLimit(c.Query("limit"), 50, 200)
	out, next, err := h.svc.Deliveries(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params("appId")), limit, strings.Clone(c.Query("before")))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"deliveries": out, "nextBefore": next})
}

// Deliveries pages through the logout deliveries of the project's app appID.
func (s *Service) Deliveries(ctx context.Context, projectID, appID string, limit int, before string) ([]Delivery, *string, error) {
	ok, err := s.ent.OAuthClient.Query().Where(oauthclient.ID(appID), oauthclient.ProjectID(projectID)).Exist(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, errNoApp
	}
	q := s.ent.LogoutDelivery.Query().Where(logoutdelivery.ClientID(appID), logoutdelivery.ProjectID(projectID))
	if before != "" {
		q = q.Where(logoutdelivery.IDLT(before))
	}
	ds, err := q.Order(logoutdelivery.ByID(sql.OrderDesc())).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, nil, err
	}
	var next *string
	if len(ds) > limit {
		ds = ds[:limit]
		id := ds[limit-1].ID
		next = &id
	}
	out := make([]Delivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, viewOf(d))
	}
	return out, next, nil
}

func viewOf(d *ent.LogoutDelivery) Delivery {
	v := Delivery{ID: d.ID, SessionHandle: d.Sid, UserID: d.UserID, URL: d.URL, Status: d.Status.String(), Attempts: d.Attempts,
		LastAttemptAt: utc(d.LastAttemptAt), LastStatusCode: d.LastStatusCode, LastError: d.LastError, DeliveredAt: utc(d.DeliveredAt),
		CreatedAt: d.CreatedAt.UTC()}
	if d.Status == logoutdelivery.StatusPending {
		v.NextAttemptAt = utc(&d.NextAttemptAt)
	}
	return v
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
