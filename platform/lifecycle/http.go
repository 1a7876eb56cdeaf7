package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/rollover"
)

// Routes are a kind's routes: a project's collection (list, mint, revoke, roll) behind
// its admins, and "who am I" for the holder of a secret.
type Routes struct {
	// Collection is the path of a project's credentials, the project as :id (or
	// :projectId); ID names the credential's parameter; Me is the who-am-I path.
	Collection, ID, Me string
	// Guards stand before every collection route; nil: signed in on the dashboard and
	// admin of the project. Mint and roll also need a recent authentication (SPEC §17).
	Guards []fiber.Handler
	// Shape is how the kind's requests and answers look; its nil members are the defaults.
	Shape Shape
}

// Shape is how a kind's requests and answers look where they are its own (the seed's
// agent tokens and badges); each nil member is the default of every other kind.
type Shape struct {
	// Parse reads a mint's body: the values of its own fields and its expiry. The project,
	// creator and origin are filled in after.
	Parse func(c *fiber.Ctx) (Mint, error)
	// Filter narrows a list by the request's query (badges: ?product=).
	Filter func(c *fiber.Ctx) []func(*sql.Selector)
	// Roll reads a roll's body: the grace of the replaced secret, and a check of the
	// project's policy read before the roll (nil: none).
	Roll func(c *fiber.Ctx) (time.Duration, func(r *Row, now time.Time) error, error)
	// Created, Listed, Revoked and Rolled write the answers.
	Created func(c *fiber.Ctx, is Issued) error
	Listed  func(c *fiber.Ctx, rs []Record) error
	Revoked func(c *fiber.Ctx, id string) error
	Rolled  func(c *fiber.Ctx, r Rolled) error
}

// Routes returns the kind's routes as r names them.
func (l *Lifecycle) Routes(g *guard.Guard, k bearer.Kit, r Routes) []httpserver.Route {
	guards := r.Guards
	if guards == nil {
		guards = []fiber.Handler{g.Dashboard(), g.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	}
	h := &handler{l: l, id: r.ID, shape: r.Shape, me: bearer.NewEndpoint(k, l.spec.Name).CountingLimited(l.Limited)}
	if l.spec.BoundField != "" {
		h.me.AcceptingDPoP()
	}
	h.defaults()
	routes := httpserver.Collection(r.Collection, r.ID, guards, h.list, g.Recently(h.create), h.revoke)
	return append(routes,
		httpserver.Route{Method: http.MethodPost, Path: r.Collection + "/:" + r.ID + "/roll", Handlers: append(append([]fiber.Handler(nil), guards...), g.Recently(h.roll))},
		httpserver.Route{Method: http.MethodGet, Path: r.Me, Handlers: []fiber.Handler{h.whoAmI}})
}

// dpopAlgs is the algs parameter of a DPoP challenge (RFC 9449 §7.1).
var dpopAlgs = strings.Join(dpop.AlgorithmNames(), " ")

type handler struct {
	l     *Lifecycle
	id    string
	shape Shape
	me    *bearer.Endpoint
}

func (h *handler) whoAmI(c *fiber.Ctx) error {
	if h.l.spec.BoundField == "" {
		return h.me.Serve(c, h.l.Me)
	}
	return h.me.Serve(c, func(ctx context.Context, token string) ([]byte, error) {
		body, err := h.l.MeProven(ctx, token, c.Get("DPoP"), h.l.deps.Config.SelfURL()+c.Path())
		var refused *dpop.Error
		if errors.As(err, &refused) { // RFC 9449 §7.1: say how, and the nonce to retry with
			c.Set("DPoP-Nonce", h.l.deps.DPoP.Nonce())
			c.Set(fiber.HeaderWWWAuthenticate, `DPoP error="`+refused.Code()+`", algs="`+dpopAlgs+`"`)
		}
		return body, err
	})
}

func (h *handler) list(c *fiber.Ctx) error {
	var where []func(*sql.Selector)
	if h.shape.Filter != nil {
		where = h.shape.Filter(c)
	}
	rs, err := h.l.List(c.UserContext(), guard.ProjectOf(c), where...)
	if err != nil {
		return err
	}
	return h.shape.Listed(c, rs)
}

func (h *handler) create(c *fiber.Ctx) error {
	m, err := h.shape.Parse(c)
	if err != nil {
		return err
	}
	m.ProjectID, m.Creator, m.Origin = guard.ProjectOf(c), guard.ActorOf(c), httpserver.Origin(c)
	is, err := h.l.Mint(c.UserContext(), m)
	if err != nil {
		return err
	}
	return h.shape.Created(c, is)
}

func (h *handler) revoke(c *fiber.Ctx) error {
	id := strings.Clone(c.Params(h.id))
	if err := h.l.Revoke(c.UserContext(), guard.ProjectOf(c), id, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return h.shape.Revoked(c, id)
}

func (h *handler) roll(c *fiber.Ctx) error {
	grace, may, err := h.shape.Roll(c)
	if err != nil {
		return err
	}
	r, err := h.l.Roll(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params(h.id)), grace, guard.ActorOf(c), httpserver.Origin(c), may)
	if err != nil {
		return err
	}
	return h.shape.Rolled(c, r)
}

// defaults fills the shape's nil members with every kind's: the answers
// { credential, plaintext }, { credentials }, { ok, id }, and a roll's answer with
// previousSecretExpiresAt; bodies checked as SPEC §6 checks a badge's.
func (h *handler) defaults() {
	s := &h.shape
	if s.Parse == nil {
		s.Parse = func(c *fiber.Ctx) (Mint, error) { return h.l.ParseMint(c.Body()) }
	}
	if s.Roll == nil {
		s.Roll = func(c *fiber.Ctx) (time.Duration, func(*Row, time.Time) error, error) {
			grace, err := Grace(c.Body())
			return grace, nil, err
		}
	}
	if s.Created == nil {
		s.Created = func(c *fiber.Ctx, is Issued) error {
			return c.Status(http.StatusCreated).JSON(fiber.Map{"credential": Record{Row: is.Row}, "plaintext": is.Plaintext})
		}
	}
	if s.Listed == nil {
		s.Listed = func(c *fiber.Ctx, rs []Record) error { return c.JSON(fiber.Map{"credentials": rs}) }
	}
	if s.Revoked == nil {
		s.Revoked = func(c *fiber.Ctx, id string) error { return c.JSON(fiber.Map{"ok": true, "id": id}) }
	}
	if s.Rolled == nil {
		s.Rolled = func(c *fiber.Ctx, r Rolled) error {
			return c.JSON(fiber.Map{"credential": Record{Row: r.Row}, "plaintext": r.Plaintext, "previousSecretExpiresAt": r.PreviousSecretExpiresAt})
		}
	}
}

// Grace reads a roll's body as SPEC §12 and §6 say: optional; when there is one, a JSON
// object whose graceHours, if present, is a number from 0 to 168.
func Grace(body []byte) (time.Duration, error) {
	grace, notObject, err := rollover.Grace(body)
	switch {
	case notObject:
		return 0, apperr.Validation(apperr.NotAnObject)
	case err != nil:
		return 0, apperr.Validation(apperr.Issue{Field: "graceHours", Reason: "must be a number from 0 to 168"})
	}
	return grace, nil
}
