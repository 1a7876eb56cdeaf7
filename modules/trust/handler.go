package trust

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/trustedauthorizationserver"
	"github.com/authcore/authcore/ent/trustedissuer"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/resource"
)

type handler struct {
	s         *service
	guard     *guard.Guard
	resources resource.Registry
}

// routes: a project's admins see and change its trust; adding widens what tokens can be
// had, so it wants a recent authentication, as minting does.
func (h *handler) routes() []httpserver.Route {
	g := h.guard
	admin := []fiber.Handler{g.Dashboard(), g.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	return append(
		httpserver.Collection("/v1/projects/:id/trust/issuers", "issuerId", admin, h.listIssuers, g.Recently(h.addIssuer), g.Recently(h.removeIssuer)),
		httpserver.Collection("/v1/projects/:id/trust/authorization-servers", "serverId", admin, h.listAS, g.Recently(h.addAS), g.Recently(h.removeAS))...)
}

// issuerView is a trusted issuer as the API shows it.
type issuerView struct {
	ID             string         `json:"id"`
	ProjectID      string         `json:"projectId"`
	Issuer         string         `json:"issuer"`
	Kind           string         `json:"kind"`
	Name           string         `json:"name"`
	JWKSURI        *string        `json:"jwksUri"`
	JWKS           map[string]any `json:"jwks"`
	Audience       *string        `json:"audience"`
	SubjectClaim   string         `json:"subjectClaim"`
	SubjectPattern *string        `json:"subjectPattern"`
	Scopes         []string       `json:"scopes"`
	Resources      []string       `json:"resources"`
	TrustEmail     bool           `json:"trustEmail"`
	CreatedAt      time.Time      `json:"createdAt"`
}

func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func issuerViewOf(r *ent.TrustedIssuer) issuerView {
	return issuerView{ID: r.ID, ProjectID: r.ProjectID, Issuer: r.Issuer, Kind: string(r.Kind), Name: r.Name, JWKSURI: orNil(r.JwksURI),
		JWKS: r.Jwks, Audience: orNil(r.Audience), SubjectClaim: r.SubjectClaim, SubjectPattern: orNil(r.SubjectPattern),
		Scopes: nonNil(r.Scopes), Resources: nonNil(r.Resources), TrustEmail: r.TrustEmail, CreatedAt: r.CreatedAt.UTC()}
}

func (h *handler) listIssuers(c *fiber.Ctx) error {
	rows, err := h.s.ent.TrustedIssuer.Query().Where(trustedissuer.ProjectID(guard.ProjectOf(c))).Order(ent.Asc(trustedissuer.FieldID)).All(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]issuerView, len(rows))
	for i, r := range rows {
		out[i] = issuerViewOf(r)
	}
	return c.JSON(fiber.Map{"issuers": out})
}

// addIssuer is POST …/trust/issuers { issuer, kind, name?, jwksUri? | jwks?, audience?,
// subjectClaim?, subjectPattern?, scopes?, resources?, trustEmail? }.
func (h *handler) addIssuer(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	body := jsonbody.ParseOrEmpty(c.Body())
	in := issuerInput{Issuer: f.RequiredString("issuer"), Kind: f.RequiredString("kind")}
	str := func(name string, into *string) {
		v, st := body.String(name)
		switch st {
		case jsonbody.OK:
			*into = v
		case jsonbody.WrongType:
			f.Fail(name, "must be a string")
		}
	}
	list := func(name string, into *[]string) {
		v, st := body.Strings(name)
		switch st {
		case jsonbody.OK:
			*into = v
		case jsonbody.WrongType:
			f.Fail(name, "must be an array of strings")
		}
	}
	str("name", &in.Name)
	str("jwksUri", &in.JWKSURI)
	str("audience", &in.Audience)
	str("subjectClaim", &in.SubjectClaim)
	str("subjectPattern", &in.SubjectPattern)
	list("scopes", &in.Scopes)
	list("resources", &in.Resources)
	if raw, st := body.RawObject("jwks"); st == jsonbody.WrongType {
		f.Fail("jwks", "must be a JSON Web Key Set object")
	} else if st == jsonbody.OK {
		_ = json.Unmarshal(raw, &in.JWKS)
	}
	if v, st := body.Bool("trustEmail"); st == jsonbody.OK {
		in.TrustEmail = v
	} else if st == jsonbody.WrongType {
		f.Fail("trustEmail", "must be a boolean")
	}
	if len(in.Name) > maxName || strings.ContainsFunc(in.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		f.Fail("name", "at most 100 characters, none a control character")
	}
	if err := f.Err(); err != nil {
		return err
	}
	project := guard.ProjectOf(c)
	if err := h.s.check(c.UserContext(), project, &in, h.resources); err != nil {
		return err
	}
	if in.Name == "" {
		in.Name = in.Issuer
	}
	row, err := h.s.add(c.UserContext(), project, guard.ActorOf(c), in, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(issuerViewOf(row))
}

func (h *handler) removeIssuer(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("issuerId"))
	if err := h.s.remove(c.UserContext(), guard.ProjectOf(c), id, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "issuerId": id})
}

// asView is an allowed authorization server as the API shows it.
type asView struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"projectId"`
	Issuer    string    `json:"issuer"`
	ClientID  string    `json:"clientId"`
	CreatedAt time.Time `json:"createdAt"`
}

func asViewOf(r *ent.TrustedAuthorizationServer) asView {
	return asView{ID: r.ID, ProjectID: r.ProjectID, Issuer: r.Issuer, ClientID: r.ClientID, CreatedAt: r.CreatedAt.UTC()}
}

func (h *handler) listAS(c *fiber.Ctx) error {
	rows, err := h.s.ent.TrustedAuthorizationServer.Query().Where(trustedauthorizationserver.ProjectID(guard.ProjectOf(c))).
		Order(ent.Asc(trustedauthorizationserver.FieldID)).All(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]asView, len(rows))
	for i, r := range rows {
		out[i] = asViewOf(r)
	}
	return c.JSON(fiber.Map{"authorizationServers": out})
}

// addAS is POST …/trust/authorization-servers { issuer, clientId }.
func (h *handler) addAS(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	issuer, clientID := f.RequiredString("issuer"), f.RequiredString("clientId")
	if issuer != "" {
		in := issuerInput{Issuer: issuer, Kind: kindEnterprise}
		if err := h.s.check(c.UserContext(), guard.ProjectOf(c), &in, h.resources); err != nil {
			return err
		}
	}
	if len(clientID) > maxURI {
		f.Fail("clientId", "at most 2048 characters")
	}
	if err := f.Err(); err != nil {
		return err
	}
	row, err := h.s.addAS(c.UserContext(), guard.ProjectOf(c), guard.ActorOf(c), issuer, clientID, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(asViewOf(row))
}

func (h *handler) removeAS(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("serverId"))
	if err := h.s.removeAS(c.UserContext(), guard.ProjectOf(c), id, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "serverId": id})
}
