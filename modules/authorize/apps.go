package authorize

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/oauthauthorization"
	"github.com/authcore/authcore/ent/oauthclient"
	"github.com/authcore/authcore/ent/oauthcode"
	"github.com/authcore/authcore/ent/oauthgrant"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/secret"
)

// Apps (SPEC §25): OAuth clients a project registers for its own people. An app is an
// oauth_clients row whose project_id is set; the authorization endpoint and the token
// endpoint serve it as any registered client, so this file only administers the rows.

// The audit actions of apps.
const (
	actionAppCreate = "app.create"
	actionAppUpdate = "app.update"
	actionAppRotate = "app.secret_rotate"
	actionAppDelete = "app.delete"
)

// The app types (SPEC §25): web apps keep a secret or a key on a server; the others run
// where anyone can read them, so they are public clients (token_endpoint_auth_method none).
const (
	appWeb    = "web"
	appSPA    = "spa"
	appNative = "native"
	appCLI    = "cli"
)

const (
	maxAppName = 80
	maxClaims  = 20
	// defaultGraceHours is how long a rotated secret keeps working unless the rotation
	// says otherwise: a day lets every replica of the app's own deployment pick up the new
	// one; a week (maxGraceHours) is the most, since a leaked secret must die soon.
	defaultGraceHours = 24
	maxGraceHours     = 168
)

const grantDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"

// appGrants are the grant types an app may register (SPEC §25).
var appGrants = []string{grantAuthorizationCode, grantRefreshToken, grantDeviceCode}

// registeredClaims are claims the token endpoint sets itself (OIDC Core §2, §5.1, JWT
// RFC 7519, SPEC §16 and §26): a custom claim never overrides one of them.
var registeredClaims = []string{"sub", "iss", "aud", "exp", "iat", "nbf", "jti", "auth_time", "nonce", "acr", "amr", "azp",
	"sid", "at_hash", "c_hash", "s_hash", "email", "email_verified", "name", "given_name", "family_name", "middle_name",
	"nickname", "preferred_username", "profile", "picture", "website", "gender", "birthdate", "zoneinfo", "locale",
	"phone_number", "phone_number_verified", "address", "updated_at", "org_id", "client_id", "scope", "project_id",
	"grant_id", "cnf", "act", "may_act", "events", "typ", "kind", "tenant_id", "tid", "org_role", "org_permissions"}

var (
	claimName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:/-]{0,127}$`)
	claimPath = regexp.MustCompile(`^metadata(\.[A-Za-z0-9_-]{1,64}){1,8}$`)
)

// appFields are the members an app's body may hold; any other is refused, as a typo in a
// security setting must not pass silently.
var appFields = []string{"name", "type", "redirectUris", "postLogoutRedirectUris", "backchannelLogoutUri", "frontchannelLogoutUri",
	"firstParty", "tokenEndpointAuthMethod", "jwks", "jwksUri", "grantTypes", "scopes", "idTokenSignedResponseAlg", "claims"}

// fixedFields cannot change once an app exists: its type and how it authenticates decide
// what its secret is, so another one is a new app.
var fixedFields = []string{"type", "tokenEndpointAuthMethod"}

var errAppNotFound = apperr.NotFound("no such app in this project")

// appSpec is what an app is registered as.
type appSpec struct {
	Name, Type, AuthMethod, JWKSURI, Backchannel, Frontchannel, IDTokenAlg string
	RedirectURIs, PostLogout, GrantTypes, Scopes                           []string
	FirstParty                                                             bool
	JWKS                                                                   map[string]any
	Claims                                                                 map[string]string
}

func specOf(r *ent.OAuthClient) appSpec {
	return appSpec{Name: r.Name, Type: r.AppType, AuthMethod: r.TokenEndpointAuthMethod, JWKSURI: r.JwksURI, Backchannel: r.BackchannelLogoutURI,
		Frontchannel: r.FrontchannelLogoutURI, IDTokenAlg: r.IDTokenSignedResponseAlg, RedirectURIs: r.RedirectUris, PostLogout: r.PostLogoutRedirectUris,
		GrantTypes: r.GrantTypes, Scopes: strings.Fields(r.Scope), FirstParty: r.FirstParty, JWKS: r.Jwks, Claims: r.Claims}
}

// appView is an app as the API shows it: never its secret.
type appView struct {
	ClientID                string            `json:"clientId"`
	Name                    string            `json:"name"`
	Type                    string            `json:"type"`
	RedirectURIs            []string          `json:"redirectUris"`
	PostLogoutRedirectURIs  []string          `json:"postLogoutRedirectUris"`
	BackchannelLogoutURI    string            `json:"backchannelLogoutUri,omitempty"`
	FrontchannelLogoutURI   string            `json:"frontchannelLogoutUri,omitempty"`
	FirstParty              bool              `json:"firstParty"`
	TokenEndpointAuthMethod string            `json:"tokenEndpointAuthMethod"`
	JWKS                    map[string]any    `json:"jwks,omitempty"`
	JWKSURI                 string            `json:"jwksUri,omitempty"`
	GrantTypes              []string          `json:"grantTypes"`
	Scopes                  []string          `json:"scopes"`
	IDTokenAlg              string            `json:"idTokenSignedResponseAlg,omitempty"`
	Claims                  map[string]string `json:"claims"`
	CreatedAt               time.Time         `json:"createdAt"`
	// PreviousSecretExpiresAt is when a rotated secret stops working; null when none does.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
}

func viewOfApp(r *ent.OAuthClient, now time.Time) appView {
	v := appView{ClientID: r.ID, Name: r.Name, Type: r.AppType, RedirectURIs: nonNil(r.RedirectUris), PostLogoutRedirectURIs: nonNil(r.PostLogoutRedirectUris),
		BackchannelLogoutURI: r.BackchannelLogoutURI, FrontchannelLogoutURI: r.FrontchannelLogoutURI, FirstParty: r.FirstParty,
		TokenEndpointAuthMethod: r.TokenEndpointAuthMethod, JWKS: r.Jwks, JWKSURI: r.JwksURI, GrantTypes: nonNil(r.GrantTypes),
		Scopes: nonNil(strings.Fields(r.Scope)), IDTokenAlg: r.IDTokenSignedResponseAlg, Claims: r.Claims, CreatedAt: r.CreatedAt.UTC()}
	if v.Claims == nil {
		v.Claims = map[string]string{}
	}
	if e := r.PreviousSecretExpiresAt; e != nil && r.PreviousSecretDigest != nil && len(*r.PreviousSecretDigest) > 0 && e.After(now) {
		t := e.UTC()
		v.PreviousSecretExpiresAt = &t
	}
	return v
}

// readApp reads an app's body onto s (a new app's defaults, or the app as it is for a
// PATCH) and checks the whole result, every violation with its field.
func readApp(raw []byte, s *appSpec, creating bool) error {
	f := jsonbody.Read(raw)
	for name := range f.Object {
		switch {
		case !slices.Contains(appFields, name):
			f.Fail(name, "not a field of an app")
		case !creating && slices.Contains(fixedFields, name):
			f.Fail(name, "cannot change: register a new app")
		}
	}
	str := func(name string, into *string) {
		switch v, st := f.String(name); st {
		case jsonbody.OK:
			*into = v
		case jsonbody.Null:
			*into = ""
		case jsonbody.WrongType:
			f.Fail(name, "must be a string")
		}
	}
	strs := func(name string, into *[]string) {
		switch v, st := f.Strings(name); st {
		case jsonbody.OK:
			*into = v
		case jsonbody.Null:
			*into = nil
		case jsonbody.WrongType:
			f.Fail(name, "must be an array of strings")
		}
	}
	if _, st := f.String("name"); creating && (st == jsonbody.Absent || st == jsonbody.Null) {
		f.Fail("name", "required string")
	}
	if _, st := f.String("type"); creating && (st == jsonbody.Absent || st == jsonbody.Null) {
		f.Fail("type", "required: web, spa, native or cli")
	}
	str("name", &s.Name)
	str("type", &s.Type)
	str("tokenEndpointAuthMethod", &s.AuthMethod)
	str("jwksUri", &s.JWKSURI)
	str("backchannelLogoutUri", &s.Backchannel)
	str("frontchannelLogoutUri", &s.Frontchannel)
	str("idTokenSignedResponseAlg", &s.IDTokenAlg)
	strs("redirectUris", &s.RedirectURIs)
	strs("postLogoutRedirectUris", &s.PostLogout)
	strs("grantTypes", &s.GrantTypes)
	strs("scopes", &s.Scopes)
	switch v, st := f.Bool("firstParty"); st {
	case jsonbody.OK:
		s.FirstParty = v
	case jsonbody.WrongType:
		f.Fail("firstParty", "must be a boolean")
	}
	switch raw, st := f.RawObject("jwks"); st {
	case jsonbody.OK:
		s.JWKS = nil
		if json.Unmarshal(raw, &s.JWKS) != nil {
			f.Fail("jwks", "must be a JSON Web Key Set object")
		}
	case jsonbody.Null:
		s.JWKS = nil
	case jsonbody.WrongType:
		f.Fail("jwks", "must be a JSON Web Key Set object")
	}
	switch raw, st := f.RawObject("claims"); st {
	case jsonbody.OK:
		s.Claims = nil
		if json.Unmarshal(raw, &s.Claims) != nil {
			f.Fail("claims", "must be an object of claim names to metadata paths (strings)")
		}
	case jsonbody.Null:
		s.Claims = nil
	case jsonbody.WrongType:
		f.Fail("claims", "must be an object of claim names to metadata paths (strings)")
	}
	if err := f.Err(); err != nil {
		return err // the rules below read the fields as the types they must have
	}
	if creating && s.AuthMethod == "" {
		s.AuthMethod = map[bool]string{true: authSecretBasic, false: authNone}[s.Type == appWeb]
	}
	if len(s.GrantTypes) == 0 {
		s.GrantTypes = []string{grantAuthorizationCode, grantRefreshToken}
	}
	s.check(f)
	return f.Err()
}

// check is every rule of an app (SPEC §25, §21); each broken one is an issue of its field.
func (s *appSpec) check(f *jsonbody.Fields) {
	if n := utf8.RuneCountInString(s.Name); n == 0 || n > maxAppName || strings.IndexFunc(s.Name, invisible) >= 0 || strings.TrimSpace(s.Name) == "" {
		f.Fail("name", fmt.Sprintf("1 to %d characters, without control or format characters", maxAppName))
	}
	if !slices.Contains([]string{appWeb, appSPA, appNative, appCLI}, s.Type) {
		f.Fail("type", "must be web, spa, native or cli")
		return
	}
	methods := []string{authNone}
	if s.Type == appWeb {
		methods = []string{authSecretBasic, authSecretPost, authPrivateKeyJWT}
	}
	if !slices.Contains(methods, s.AuthMethod) {
		f.Fail("tokenEndpointAuthMethod", "a "+s.Type+" app's must be "+strings.Join(methods, ", ")+
			map[bool]string{true: " (it keeps a secret or a key on a server)", false: " (it runs where anyone can read it: a public client)"}[s.Type == appWeb])
	}
	if why := checkKeys(s.AuthMethod, s.JWKS, s.JWKSURI); why != "" {
		f.Fail(cmp.Or(map[bool]string{true: "jwksUri"}[s.JWKSURI != "" && s.JWKS == nil], "jwks"), why)
	}
	for _, g := range s.GrantTypes {
		if !slices.Contains(appGrants, g) {
			f.Fail("grantTypes", "may hold "+strings.Join(appGrants, ", ")+": "+g+" is none of them")
			return
		}
	}
	if !slices.Contains(s.GrantTypes, grantAuthorizationCode) && !slices.Contains(s.GrantTypes, grantDeviceCode) {
		f.Fail("grantTypes", "must include authorization_code or the device grant, which issue a first token")
	}
	// A CLI that only uses the device grant has nowhere to be redirected to.
	if len(s.RedirectURIs) > 0 || slices.Contains(s.GrantTypes, grantAuthorizationCode) {
		if why := checkAppRedirects(s.RedirectURIs, s.Type); why != "" {
			f.Fail("redirectUris", why)
		}
	}
	if why := checkPostLogout(s.PostLogout); why != "" {
		f.Fail("postLogoutRedirectUris", why)
	}
	for name, v := range map[string]string{"backchannelLogoutUri": s.Backchannel, "frontchannelLogoutUri": s.Frontchannel} {
		if why := checkLogoutURI(v); why != "" {
			f.Fail(name, why)
		}
	}
	for _, sc := range s.Scopes {
		if why := checkScope(sc); why != "" || len(strings.Fields(sc)) != 1 {
			f.Fail("scopes", cmp.Or(why, "each scope is one non-empty scope, without spaces")+": "+sc)
			break
		}
	}
	if s.IDTokenAlg != "" && !slices.Contains(oauth.IDTokenAlgorithms, s.IDTokenAlg) {
		f.Fail("idTokenSignedResponseAlg", "must be RS256 or EdDSA")
	}
	if len(s.Claims) > maxClaims {
		f.Fail("claims", fmt.Sprintf("at most %d claims", maxClaims))
	}
	for _, name := range slices.Sorted(maps.Keys(s.Claims)) {
		switch path := s.Claims[name]; {
		case !claimName.MatchString(name):
			f.Fail("claims."+name, "a claim name is a letter or _ then up to 127 letters, digits, _ . : / - (a URL is collision-resistant, OIDC Core §5.1.2)")
		case slices.Contains(registeredClaims, name):
			f.Fail("claims."+name, "is a registered claim the server sets: a custom claim never overrides it")
		case !claimPath.MatchString(path):
			f.Fail("claims."+name, "the path must be metadata.<key>[.<key>…], such as metadata.plan")
		}
	}
}

// checkAppRedirects applies the redirect rules of an app's type: a web app's and an SPA's
// are https, or http on loopback for development (a confidential web app's secret guards
// its codes wherever they land; a relying party under development listens on loopback, as
// Auth0's and Keycloak's allow); a native app's are
// loopback http, https or a private-use scheme (RFC 8252 §7); a CLI's are loopback http
// (RFC 8252 §7.3), where it listens for the code.
func checkAppRedirects(uris []string, typ string) string {
	switch typ {
	case appNative:
		return checkRedirectURIs(uris, "native")
	}
	if why := checkRedirectURIs(uris, ""); why != "" {
		return why
	}
	for _, raw := range uris {
		u, _ := url.Parse(raw)
		scheme := strings.ToLower(u.Scheme)
		switch {
		case (typ == appSPA || typ == appWeb) && scheme != "https" && scheme != "http":
			return "of a web app or an SPA are https (or http on loopback): " + raw
		case typ == appCLI && (scheme != "http" || !loopbackHost(u.Hostname())):
			return "of a CLI are http on a loopback address, where it listens for the code (RFC 8252 §7.3): " + raw
		}
	}
	return ""
}

// checkLogoutURI checks a back- or front-channel logout URI: absent, or https (http only
// on loopback), absolute, without a fragment (OIDC Back-Channel Logout §2.2, Front-Channel
// Logout §2).
func checkLogoutURI(raw string) string {
	if raw == "" {
		return ""
	}
	if why := checkRedirectURIs([]string{raw}, ""); why != "" {
		return why
	}
	if u, _ := url.Parse(raw); !strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(u.Scheme, "http") {
		return "must be https (http only on a loopback address): " + raw
	}
	return ""
}

// appRow is the app id names in project, in tx: another project's app is not found.
func appRow(ctx context.Context, c *ent.OAuthClientClient, project, id string) (*ent.OAuthClient, error) {
	if !strings.HasPrefix(id, registeredPrefix) || len(id) > 40 {
		return nil, errAppNotFound
	}
	row, err := c.Query().Where(oauthclient.ID(id), oauthclient.ProjectID(project)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errAppNotFound
	}
	return row, err
}

// newClientSecret is a client secret and its digest, the only form kept.
func newClientSecret(method string) (string, []byte, error) {
	if method != authSecretBasic && method != authSecretPost {
		return "", nil, nil
	}
	s, err := secret.NewToken(clientSecretKind)
	if err != nil {
		return "", nil, err
	}
	return s, secret.DigestOf(s).Bytes(), nil
}

func (h appAdmin) recordApp(c *fiber.Ctx, tx *ent.Tx, action, clientID string, md map[string]any) error {
	if md == nil {
		md = map[string]any{}
	}
	md["clientId"] = clientID
	_, err := h.grants.audit.Record(c.UserContext(), tx, audit.Event{ActorID: guard.ActorOf(c), ProjectID: guard.ProjectOf(c), Action: action,
		Origin: httpserver.Origin(c), Metadata: md})
	return err
}

func (h appAdmin) listApps(c *fiber.Ctx) error {
	rows, err := h.ent.OAuthClient.Query().Where(oauthclient.ProjectID(guard.ProjectOf(c))).Order(ent.Asc(oauthclient.FieldCreatedAt), ent.Asc(oauthclient.FieldID)).All(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]appView, len(rows))
	for i, r := range rows {
		out[i] = viewOfApp(r, h.clock.Now())
	}
	return c.JSON(fiber.Map{"apps": out})
}

func (h appAdmin) getApp(c *fiber.Ctx) error {
	if c.Params("appId") == "registration-tokens" { // no app id has this form (dcr_…)
		return h.listRegistrationTokens(c)
	}
	row, err := appRow(c.UserContext(), h.ent.OAuthClient, guard.ProjectOf(c), c.Params("appId"))
	if err != nil {
		return err
	}
	return c.JSON(viewOfApp(row, h.clock.Now()))
}

// createApp registers an app; a secret method's secret is in this answer only.
func (h appAdmin) createApp(c *fiber.Ctx) error {
	s := appSpec{FirstParty: true}
	if err := readApp(c.Body(), &s, true); err != nil {
		return err
	}
	clientSecret, digest, err := newClientSecret(s.AuthMethod)
	if err != nil {
		return err
	}
	appType := map[bool]string{true: "web", false: "native"}[s.Type == appWeb || s.Type == appSPA]
	var row *ent.OAuthClient
	err = database.WithTx(c.UserContext(), h.ent, func(tx *ent.Tx) error {
		create := tx.OAuthClient.Create().SetProjectID(guard.ProjectOf(c)).SetAppType(s.Type).SetApplicationType(appType).
			SetTokenEndpointAuthMethod(s.AuthMethod)
		if digest != nil {
			create.SetSecretDigest(digest)
		}
		s.apply(create.Mutation())
		row, err = create.Save(c.UserContext())
		if err != nil {
			return err
		}
		return h.recordApp(c, tx, actionAppCreate, row.ID, map[string]any{"name": s.Name, "type": s.Type, "firstParty": s.FirstParty})
	})
	if err != nil {
		return err
	}
	out := fiber.Map{"app": viewOfApp(row, h.clock.Now())}
	if clientSecret != "" {
		out["clientSecret"] = clientSecret
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(out)
}

// apply sets what an admin may change on m (a create's or an update's mutation).
func (s *appSpec) apply(m *ent.OAuthClientMutation) {
	m.SetName(s.Name)
	m.SetRedirectUris(nonNil(s.RedirectURIs))
	m.SetPostLogoutRedirectUris(nonNil(s.PostLogout))
	m.SetBackchannelLogoutURI(s.Backchannel)
	m.SetFrontchannelLogoutURI(s.Frontchannel)
	m.SetFirstParty(s.FirstParty)
	m.SetJwksURI(s.JWKSURI)
	if s.JWKS != nil {
		m.SetJwks(s.JWKS)
	} else {
		m.ClearJwks()
	}
	m.SetGrantTypes(s.GrantTypes)
	m.SetScope(strings.Join(s.Scopes, " "))
	m.SetIDTokenSignedResponseAlg(s.IDTokenAlg)
	claims := s.Claims
	if claims == nil {
		claims = map[string]string{}
	}
	m.SetClaims(claims)
}

// updateApp changes what may change of an app; every replica forgets the app's cached
// registration as the change commits.
func (h appAdmin) updateApp(c *fiber.Ctx) error {
	ctx := c.UserContext()
	var row *ent.OAuthClient
	err := database.WithTx(ctx, h.ent, func(tx *ent.Tx) error {
		before, err := appRow(ctx, tx.OAuthClient, guard.ProjectOf(c), c.Params("appId"))
		if err != nil {
			return err
		}
		s := specOf(before)
		if err := readApp(c.Body(), &s, false); err != nil {
			return err
		}
		upd := tx.OAuthClient.UpdateOne(before)
		s.apply(upd.Mutation())
		if row, err = upd.Save(ctx); err != nil {
			return err
		}
		fields := []string{}
		for name := range jsonbody.ParseOrEmpty(c.Body()) {
			fields = append(fields, name)
		}
		slices.Sort(fields)
		if err := h.recordApp(c, tx, actionAppUpdate, row.ID, map[string]any{"fields": fields}); err != nil {
			return err
		}
		return h.grants.bus.Publish(ctx, tx, clientTopic, row.ID)
	})
	if err != nil {
		return err
	}
	return c.JSON(viewOfApp(row, h.clock.Now()))
}

// rotateSecret gives an app a new secret (shown once); the one it had keeps working for
// graceHours (default 24, at most 168; 0 ends it at once).
func (h appAdmin) rotateSecret(c *fiber.Ctx) error {
	ctx := c.UserContext()
	grace := int64(defaultGraceHours)
	if len(bytes.TrimSpace(c.Body())) > 0 {
		f := jsonbody.Read(c.Body())
		for name := range f.Object {
			if name != "graceHours" {
				f.Fail(name, "not a field of a rotation")
			}
		}
		switch v, whole, st := f.Integer("graceHours"); {
		case st == jsonbody.Absent || st == jsonbody.Null:
		case st == jsonbody.WrongType || !whole || v < 0 || v > maxGraceHours:
			f.Fail("graceHours", fmt.Sprintf("a whole number of hours, 0 to %d", maxGraceHours))
		default:
			grace = v
		}
		if err := f.Err(); err != nil {
			return err
		}
	}
	var (
		row          *ent.OAuthClient
		clientSecret string
	)
	err := database.WithTx(ctx, h.ent, func(tx *ent.Tx) error {
		before, err := appRow(ctx, tx.OAuthClient, guard.ProjectOf(c), c.Params("appId"))
		if err != nil {
			return err
		}
		if m := before.TokenEndpointAuthMethod; m != authSecretBasic && m != authSecretPost {
			return apperr.Conflict("no_secret", "this app authenticates with "+before.TokenEndpointAuthMethod+": it has no secret to rotate")
		}
		var digest []byte
		if clientSecret, digest, err = newClientSecret(before.TokenEndpointAuthMethod); err != nil {
			return err
		}
		upd := tx.OAuthClient.UpdateOne(before).SetSecretDigest(digest)
		if grace > 0 {
			upd.SetPreviousSecretDigest(*before.SecretDigest).SetPreviousSecretExpiresAt(h.clock.Now().Add(time.Duration(grace) * time.Hour))
		} else {
			upd.ClearPreviousSecretDigest().ClearPreviousSecretExpiresAt()
		}
		if row, err = upd.Save(ctx); err != nil {
			return err
		}
		if err := h.recordApp(c, tx, actionAppRotate, row.ID, map[string]any{"graceHours": grace}); err != nil {
			return err
		}
		return h.grants.bus.Publish(ctx, tx, clientTopic, row.ID)
	})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"app": viewOfApp(row, h.clock.Now()), "clientSecret": clientSecret})
}

// deleteApp ends every grant of the app (their refresh tokens refuse, their access tokens
// introspect inactive, on every replica), drops its pending requests and codes, and
// removes it.
func (h appAdmin) deleteApp(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id := strings.Clone(c.Params("appId"))
	ended := 0
	err := database.WithTx(ctx, h.ent, func(tx *ent.Tx) error {
		row, err := appRow(ctx, tx.OAuthClient, guard.ProjectOf(c), id)
		if err != nil {
			return err
		}
		grants, err := tx.OAuthGrant.Query().Where(oauthgrant.ClientID(row.ID), oauthgrant.RevokedAtIsNil()).All(ctx)
		if err != nil {
			return err
		}
		for _, g := range grants {
			ok, err := h.grants.end(ctx, tx, g, ending{Actor: guard.ActorOf(c), Reason: "app_deleted", Origin: httpserver.Origin(c)})
			if err != nil {
				return err
			}
			if ok {
				ended++
			}
		}
		if _, err := tx.OAuthCode.Delete().Where(oauthcode.ClientID(row.ID)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.OAuthAuthorization.Delete().Where(oauthauthorization.ClientID(row.ID)).Exec(ctx); err != nil {
			return err
		}
		if err := tx.OAuthClient.DeleteOne(row).Exec(ctx); err != nil {
			return err
		}
		if err := h.recordApp(c, tx, actionAppDelete, row.ID, map[string]any{"name": row.Name, "grantsEnded": ended}); err != nil {
			return err
		}
		return h.grants.bus.Publish(ctx, tx, clientTopic, row.ID)
	})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "clientId": id, "grantsEnded": ended})
}

// appRoutes are SPEC §25's: admins of the project, a recent sign-in for every change.
// Routes are registered in path order (httpserver), where …/apps/:appId sorts before
// …/apps/registration-tokens and so matches a GET of it first: getApp hands that name
// over. The literal route stays registered so that the route table (and the OpenAPI
// check against it) says what is served.
func (h appAdmin) appRoutes(admin []fiber.Handler) []httpserver.Route {
	const (
		apps   = "/v1/projects/:id/apps"
		app    = apps + "/:appId"
		tokens = apps + "/registration-tokens"
	)
	r := func(method, path string, h fiber.Handler) httpserver.Route {
		return httpserver.Route{Method: method, Path: path, Handlers: append(slices.Clone(admin), h)}
	}
	return []httpserver.Route{
		r(http.MethodGet, tokens, h.listRegistrationTokens),
		r(http.MethodPost, tokens, h.guard.Recently(h.createRegistrationToken)),
		r(http.MethodDelete, tokens+"/:tokenId", h.guard.Recently(h.deleteRegistrationToken)),
		r(http.MethodGet, apps, h.listApps),
		r(http.MethodPost, apps, h.guard.Recently(h.createApp)),
		r(http.MethodGet, app, h.getApp),
		r(http.MethodPatch, app, h.guard.Recently(h.updateApp)),
		r(http.MethodDelete, app, h.guard.Recently(h.deleteApp)),
		r(http.MethodPost, app+"/secret", h.guard.Recently(h.rotateSecret)),
	}
}
