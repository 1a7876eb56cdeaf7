package federation

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/samlconnection"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

// SAMLView is what the org admin routes answer of a SAML connection: the SP side the IdP
// is configured with (spEntityId, acsUrl, metadataUrl: the SP's metadata) and the IdP as
// read from its metadata. Its key is never shown; its certificate is in the SP metadata.
type SAMLView struct {
	ID                string            `json:"id"`
	Type              string            `json:"type"`
	Name              string            `json:"name"`
	OrgID             string            `json:"orgId"`
	Enabled           bool              `json:"enabled"`
	SPEntityID        string            `json:"spEntityId"`
	ACSURL            string            `json:"acsUrl"`
	MetadataURL       string            `json:"metadataUrl"`
	LoginURL          string            `json:"loginUrl"`
	IdPEntityID       string            `json:"idpEntityId"`
	IdPMetadataURL    *string           `json:"idpMetadataUrl"`
	MetadataReadAt    time.Time         `json:"metadataReadAt"`
	MetadataRefreshAt *time.Time        `json:"metadataRefreshAt"`
	AttributeMapping  map[string]string `json:"attributeMapping"`
	AllowIdPInitiated bool              `json:"allowIdpInitiated"`
	GroupRoles        map[string]string `json:"groupRoles"`
	CreatedAt         time.Time         `json:"createdAt"`
	UpdatedAt         time.Time         `json:"updatedAt"`
}

// samlAdmin adds, changes and removes SAML connections, and keeps their IdP metadata
// fresh.
type samlAdmin struct {
	ent    *ent.Client
	keys   *secret.Keyring
	clock  clock.Clock
	policy outbound.Policy
	fetch  *outbound.Fetcher
	audit  *audit.Recorder
	roster identity.OrgRoster // nil: no org module
	self   string
}

func (a samlAdmin) view(c samlConn) SAMLView {
	groups := c.GroupRoles
	if groups == nil {
		groups = map[string]string{}
	}
	return SAMLView{ID: c.ID, Type: "saml", Name: c.Name, OrgID: c.OrgID, Enabled: c.Enabled,
		SPEntityID: samlMetadataURL(a.self, c.ID), ACSURL: samlACSURL(a.self, c.ID), MetadataURL: samlMetadataURL(a.self, c.ID),
		LoginURL: samlLoginURL(a.self, c.ID), IdPEntityID: c.IdPEntityID, IdPMetadataURL: orNil(c.MetadataURL),
		MetadataReadAt: c.ReadAt, MetadataRefreshAt: c.RefreshAt, AttributeMapping: c.Mapping.asMap(),
		AllowIdPInitiated: c.AllowIdPInitiated, GroupRoles: groups, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

var errSAMLNotFound = apperr.New(apperr.KindNotFound, "connection_not_found", "no such connection of this organization")

// get is the connection id names in tenant, enabled or not.
func (a samlAdmin) get(ctx context.Context, tenant, id string) (samlConn, error) {
	q := a.ent.SAMLConnection.Query().Where(samlconnection.ID(id))
	if tenant != "" {
		q = q.Where(samlconnection.TenantID(tenant))
	}
	r, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return samlConn{}, errSAMLNotFound
	}
	if err != nil {
		return samlConn{}, err
	}
	return samlConnOf(r), nil
}

// list is an org's SAML connections, oldest first.
func (a samlAdmin) list(ctx context.Context, tenant, orgID string) ([]samlConn, error) {
	rs, err := a.ent.SAMLConnection.Query().Where(samlconnection.TenantID(tenant), samlconnection.OrgID(orgID)).
		Order(ent.Asc(samlconnection.FieldCreatedAt), ent.Asc(samlconnection.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]samlConn, 0, len(rs))
	for _, r := range rs {
		out = append(out, samlConnOf(r))
	}
	return out, nil
}

// samlInput is a create or change body, each field read and checked on its own.
type samlInput struct {
	name        *string
	metadataURL *string // the IdP's
	metadataXML *string
	mapping     *samlMapping
	allowIdP    *bool
	groupRoles  map[string]string
	groupsSet   bool
	enabled     *bool
}

// readSAMLInput reads a body of POST (create) or PATCH …/connections.
func (a samlAdmin) readSAMLInput(ctx context.Context, tenant string, body []byte, create bool) (samlInput, *jsonbody.Fields) {
	f := jsonbody.Read(body)
	var in samlInput
	switch s, st := f.String("name"); st {
	case jsonbody.OK:
		if s = strings.TrimSpace(s); s == "" || len(s) > 200 {
			f.Fail("name", "must be 1 to 200 characters")
		}
		in.name = &s
	case jsonbody.Absent:
	default:
		f.Fail("name", "must be a string")
	}
	u, ust := f.String("metadataUrl")
	x, xst := f.String("metadataXml")
	switch {
	case ust != jsonbody.Absent && xst != jsonbody.Absent:
		f.Fail("metadataUrl", "give either metadataUrl or metadataXml, not both")
	case ust == jsonbody.OK:
		if u = strings.TrimSpace(u); u == "" || len(u) > 2048 {
			f.Fail("metadataUrl", "must be the https URL of the identity provider's metadata")
		}
		in.metadataURL = &u
	case ust != jsonbody.Absent:
		f.Fail("metadataUrl", "must be a string")
	case xst == jsonbody.OK:
		if strings.TrimSpace(x) == "" {
			f.Fail("metadataXml", "must be the identity provider's metadata document")
		}
		in.metadataXML = &x
	case xst != jsonbody.Absent:
		f.Fail("metadataXml", "must be a string")
	case create:
		f.Fail("metadataUrl", "required: metadataUrl or metadataXml, the identity provider's metadata")
	}
	switch raw, st := f.RawObject("attributeMapping"); st {
	case jsonbody.OK:
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		out := samlMapping{}
		for k, v := range m {
			s, ok := v.(string)
			if ok {
				s = strings.TrimSpace(s)
			}
			if !ok || len(s) > 256 {
				f.Fail("attributeMapping."+k, "must be an attribute name (a string of at most 256 characters)")
				continue
			}
			switch k {
			case "email":
				out.Email = s
			case "firstName":
				out.FirstName = s
			case "lastName":
				out.LastName = s
			case "groups":
				out.Groups = s
			default:
				f.Fail("attributeMapping."+k, "unknown: email, firstName, lastName or groups")
			}
		}
		if out.Email == "" {
			f.Fail("attributeMapping.email", "required: the attribute holding the person's email address")
		}
		in.mapping = &out
	case jsonbody.Absent:
		if create {
			f.Fail("attributeMapping", "required: { email, firstName?, lastName?, groups? }, the assertion attributes to read")
		}
	default:
		f.Fail("attributeMapping", "must be an object")
	}
	switch b, st := f.Bool("allowIdpInitiated"); st {
	case jsonbody.OK:
		in.allowIdP = &b
	case jsonbody.Absent:
	default:
		f.Fail("allowIdpInitiated", "must be a boolean")
	}
	switch b, st := f.Bool("enabled"); st {
	case jsonbody.OK:
		in.enabled = &b
	case jsonbody.Absent:
	default:
		f.Fail("enabled", "must be a boolean")
	}
	switch raw, st := f.RawObject("groupRoles"); st {
	case jsonbody.OK:
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		in.groupRoles, in.groupsSet = map[string]string{}, true
		if len(m) > 100 {
			f.Fail("groupRoles", "at most 100 groups")
			break
		}
		for g, v := range m {
			role, ok := v.(string)
			switch {
			case g == "" || len(g) > 256:
				f.Fail("groupRoles", "group names must be 1 to 256 characters")
			case !ok:
				f.Fail("groupRoles."+g, "must be a role name")
			case role == "owner":
				f.Fail("groupRoles."+g, "owner is never given by a group: give it in the org")
			default:
				known := false
				if a.roster != nil {
					var err error
					if known, err = a.roster.RoleExists(ctx, tenant, role); err != nil {
						f.Fail("groupRoles."+g, "could not be checked")
					}
				}
				if !known {
					f.Fail("groupRoles."+g, "no such org role in this project")
				}
				in.groupRoles[g] = role
			}
		}
	case jsonbody.Absent:
	default:
		f.Fail("groupRoles", "must be an object of group name to org role")
	}
	if _, st := f.String("type"); !create && st != jsonbody.Absent {
		if t, _ := f.String("type"); t != "saml" {
			f.Fail("type", "a connection's type cannot change")
		}
	}
	return in, f
}

// metadata reads the IdP's metadata the input names (fetching a URL through the outbound
// policy, fresh) and checks it; the failure is the field's issue.
func (a samlAdmin) metadata(ctx context.Context, in samlInput, f *jsonbody.Fields) (idpMetadata, []byte) {
	var doc []byte
	field := "metadataXml"
	switch {
	case in.metadataURL != nil:
		field = "metadataUrl"
		d := a.fetch.Refresh(ctx, *in.metadataURL)
		if d.Err != nil {
			f.Fail(field, "the metadata could not be read: "+d.Err.Error())
			return idpMetadata{}, nil
		}
		doc = d.Body
	case in.metadataXML != nil:
		doc = []byte(*in.metadataXML)
	default:
		return idpMetadata{}, nil
	}
	md, err := parseIdPMetadata(doc, a.policy.AllowHTTP, a.clock.Now())
	if err != nil {
		f.Fail(field, "not usable metadata: "+err.Error())
		return idpMetadata{}, nil
	}
	return md, doc
}

// create is POST …/connections { type: saml, … }: the connection with a new key pair.
func (a samlAdmin) create(ctx context.Context, tenant, orgID string, body []byte, ch Change) (SAMLView, error) {
	in, f := a.readSAMLInput(ctx, tenant, body, true)
	if f.Err() != nil {
		return SAMLView{}, f.Err()
	}
	md, doc := a.metadata(ctx, in, f)
	if err := f.Err(); err != nil {
		return SAMLView{}, err
	}
	id := schema.NewID(schema.SAMLConnectionIDPrefix)
	now := a.clock.Now()
	key, der, err := newSPKey(id, now)
	if err != nil {
		return SAMLView{}, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return SAMLView{}, err
	}
	sealed, err := sealedSAMLKey.Seal(a.keys, pk, id)
	if err != nil {
		return SAMLView{}, err
	}
	name := "SAML"
	if in.name != nil {
		name = *in.name
	}
	if in.groupRoles == nil {
		in.groupRoles = map[string]string{}
	}
	build := func(tx *ent.Tx) *ent.SAMLConnectionCreate {
		c := tx.SAMLConnection.Create().SetID(id).SetTenantID(tenant).SetOrgID(orgID).SetName(name).
			SetIdpMetadata(string(doc)).SetIdpEntityID(md.ed.EntityID).SetMetadataReadAt(now).
			SetAttributeMapping(in.mapping.asMap()).SetSpKeySealed(sealed).SetSpCertificate(base64.StdEncoding.EncodeToString(der))
		if in.metadataURL != nil {
			c = c.SetMetadataURL(*in.metadataURL).SetMetadataRefreshAt(md.refreshAt)
		}
		if in.allowIdP != nil {
			c = c.SetAllowIdpInitiated(*in.allowIdP)
		}
		if in.enabled != nil {
			c = c.SetEnabled(*in.enabled)
		}
		return c.SetGroupRoles(in.groupRoles)
	}
	var r *ent.SAMLConnection
	err = database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
		saved, err := build(tx).Save(ctx)
		if err != nil {
			return err
		}
		r = saved
		return a.record(ctx, tx, tenant, orgID, actionProviderCreate, ch, map[string]any{"providerId": id, "type": "saml", "name": name})
	})
	if err != nil {
		return SAMLView{}, err
	}
	return a.view(samlConnOf(r)), nil
}

func (a samlAdmin) record(ctx context.Context, tx *ent.Tx, tenant, orgID, action string, ch Change, md map[string]any) error {
	md["orgId"] = orgID
	_, err := a.audit.Record(ctx, tx, audit.Event{ActorID: ch.Actor, ProjectID: tenant, OrgID: &orgID, Action: action, Origin: ch.Origin, Metadata: md})
	return err
}

// update is PATCH …/connections/{id} of a SAML connection: the fields the body names.
// New metadata (by URL or document) replaces the old; the key pair stays.
func (a samlAdmin) update(ctx context.Context, c samlConn, body []byte, ch Change) (SAMLView, error) {
	in, f := a.readSAMLInput(ctx, c.TenantID, body, false)
	if f.Err() != nil {
		return SAMLView{}, f.Err()
	}
	md, doc := a.metadata(ctx, in, f)
	if err := f.Err(); err != nil {
		return SAMLView{}, err
	}
	now := a.clock.Now()
	build := func(tx *ent.Tx) *ent.SAMLConnectionUpdateOne {
		u := tx.SAMLConnection.UpdateOneID(c.ID)
		if in.name != nil {
			u = u.SetName(*in.name)
		}
		if doc != nil {
			u = u.SetIdpMetadata(string(doc)).SetIdpEntityID(md.ed.EntityID).SetMetadataReadAt(now)
			if in.metadataURL != nil {
				u = u.SetMetadataURL(*in.metadataURL).SetMetadataRefreshAt(md.refreshAt)
			} else {
				u = u.SetMetadataURL("").ClearMetadataRefreshAt()
			}
		}
		if in.mapping != nil {
			u = u.SetAttributeMapping(in.mapping.asMap())
		}
		if in.allowIdP != nil {
			u = u.SetAllowIdpInitiated(*in.allowIdP)
		}
		if in.enabled != nil {
			u = u.SetEnabled(*in.enabled)
		}
		if in.groupsSet {
			u = u.SetGroupRoles(in.groupRoles)
		}
		return u
	}
	var r *ent.SAMLConnection
	err := database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
		saved, err := build(tx).Save(ctx)
		if err != nil {
			return err
		}
		r = saved
		return a.record(ctx, tx, c.TenantID, c.OrgID, actionProviderUpdate, ch, map[string]any{"providerId": c.ID, "type": "saml", "metadataChanged": doc != nil})
	})
	if err != nil {
		return SAMLView{}, err
	}
	return a.view(samlConnOf(r)), nil
}

// remove deletes a connection and the identities linked through it (their people stay).
func (a samlAdmin) remove(ctx context.Context, c samlConn, ch Change) error {
	return database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
		if _, err := tx.Identity.Delete().Where(entidentity.ProviderID(c.ID)).Exec(ctx); err != nil {
			return err
		}
		if err := tx.SAMLConnection.DeleteOneID(c.ID).Exec(ctx); err != nil {
			return err
		}
		return a.record(ctx, tx, c.TenantID, c.OrgID, actionProviderDelete, ch, map[string]any{"providerId": c.ID, "type": "saml"})
	})
}

var errNoMetadataURL = apperr.Conflict("no_metadata_url", "this connection's metadata was uploaded: upload it again to change it")

// refresh reads a URL connection's metadata again now (SPEC §27: refreshed). A document
// that no longer passes keeps the one stored, so a broken publication never locks the
// org out; the error says why. A document that changed is audited (ch the admin who asked,
// or none: the periodic refresh), as an admin's upload is: it names the certificates
// the connection trusts.
func (a samlAdmin) refresh(ctx context.Context, c samlConn, fresh bool, ch Change) (samlConn, error) {
	if c.MetadataURL == "" {
		return c, errNoMetadataURL
	}
	var d outbound.Document
	if fresh {
		d = a.fetch.Refresh(ctx, c.MetadataURL)
	} else {
		d = a.fetch.Get(ctx, c.MetadataURL)
	}
	now := a.clock.Now()
	if d.Err == nil {
		md, err := parseIdPMetadata(d.Body, a.policy.AllowHTTP, now)
		if err == nil {
			var r *ent.SAMLConnection
			err := database.WithTx(ctx, a.ent, func(tx *ent.Tx) error {
				saved, err := tx.SAMLConnection.UpdateOneID(c.ID).SetIdpMetadata(string(d.Body)).SetIdpEntityID(md.ed.EntityID).
					SetMetadataReadAt(now).SetMetadataRefreshAt(md.refreshAt).Save(ctx)
				r = saved
				if err != nil || string(d.Body) == c.IdPMetadata {
					return err
				}
				return a.record(ctx, tx, c.TenantID, c.OrgID, actionProviderUpdate, ch,
					map[string]any{"providerId": c.ID, "type": "saml", "metadataChanged": true, "refreshed": true})
			})
			if err != nil {
				return c, err
			}
			return samlConnOf(r), nil
		}
		d.Err = err
	}
	// Tried again in an hour, not at every tick.
	if err := a.ent.SAMLConnection.UpdateOneID(c.ID).SetMetadataRefreshAt(now.Add(time.Hour)).Exec(ctx); err != nil {
		return c, err
	}
	return c, errMetadataUnusable.Wrap(d.Err).With("reason", d.Err.Error())
}

var errMetadataUnusable = apperr.New(apperr.KindUnavailable, "metadata_unusable",
	"the identity provider's metadata could not be read or is not usable; the connection keeps the metadata it had")

// refreshDue reads again the metadata of every URL connection whose time has come.
func (a samlAdmin) refreshDue(ctx context.Context) error {
	rs, err := a.ent.SAMLConnection.Query().Where(samlconnection.MetadataRefreshAtLTE(a.clock.Now())).Limit(100).All(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range rs {
		if _, err := a.refresh(ctx, samlConnOf(r), false, Change{}); err != nil && !apperr.IsKind(err, apperr.KindUnavailable) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
