package scim

import "strings"

// The schema and message URNs of RFC 7643 and RFC 7644.
const (
	userSchema       = "urn:ietf:params:scim:schemas:core:2.0:User"
	groupSchema      = "urn:ietf:params:scim:schemas:core:2.0:Group"
	enterpriseSchema = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	listSchema       = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	patchSchema      = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	errorSchema      = "urn:ietf:params:scim:api:messages:2.0:Error"
	spcSchema        = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	rtSchema         = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	schemaSchema     = "urn:ietf:params:scim:schemas:core:2.0:Schema"
)

// Attribute types (RFC 7643 §2.3).
const (
	tString    = "string"
	tBoolean   = "boolean"
	tComplex   = "complex"
	tDateTime  = "dateTime"
	tReference = "reference"
	tInteger   = "integer"
	tDecimal   = "decimal"
)

// attr is one attribute of a schema (RFC 7643 §7), what the Schemas endpoint describes and
// what requests are checked against.
type attr struct {
	Name       string
	Type       string
	Multi      bool
	Sub        []attr
	CaseExact  bool
	Mutability string // "" is readWrite
	Returned   string // "" is default
	Required   bool
	Unique     bool
	Desc       string
}

// schemaDef is one schema: the core User and Group and the enterprise User extension.
type schemaDef struct {
	ID, Name, Desc string
	Attrs          []attr
}

func str(name, desc string) attr { return attr{Name: name, Type: tString, Desc: desc} }

// multiComplex is the shape of emails, phoneNumbers and the like.
func multiComplex(name, desc string, canonical ...string) attr {
	return attr{Name: name, Type: tComplex, Multi: true, Desc: desc, Sub: []attr{
		str("value", "The value."), str("display", "A human-readable name."), str("type", "A label: "+strings.Join(canonical, ", ")+"."),
		{Name: "primary", Type: tBoolean, Desc: "The primary value."},
	}}
}

var (
	userDef = schemaDef{ID: userSchema, Name: "User", Desc: "User Account", Attrs: []attr{
		{Name: "userName", Type: tString, Required: true, Unique: true, Desc: "Unique identifier for the User within the directory; an email address links or creates the project's user with that address."},
		{Name: "name", Type: tComplex, Desc: "The components of the user's name.", Sub: []attr{
			str("formatted", "The full name."), str("familyName", "The family name."), str("givenName", "The given name."),
			str("middleName", "The middle name."), str("honorificPrefix", "The honorific prefix."), str("honorificSuffix", "The honorific suffix."),
		}},
		str("displayName", "The name displayed to end users."),
		str("nickName", "The casual name."),
		{Name: "profileUrl", Type: tReference, Desc: "A URL of the user's profile."},
		str("title", "The user's title."),
		str("userType", "The relationship to the organization."),
		str("preferredLanguage", "The preferred written or spoken language."),
		str("locale", "The default location."),
		str("timezone", "The time zone (IANA)."),
		{Name: "active", Type: tBoolean, Desc: "false deprovisions the project's user: sessions, grants and tokens end; true lets them sign in again."},
		{Name: "password", Type: tString, Mutability: "writeOnly", Returned: "never", Desc: "Accepted and discarded: people provisioned by a directory sign in through their org."},
		multiComplex("emails", "Email addresses; the primary (else work, else first) links the project's user.", "work", "home", "other"),
		multiComplex("phoneNumbers", "Phone numbers.", "work", "home", "mobile", "fax", "pager", "other"),
		multiComplex("ims", "Instant messaging addresses.", "aim", "gtalk", "icq", "xmpp", "msn", "skype", "qq", "yahoo"),
		multiComplex("photos", "URLs of photos.", "photo", "thumbnail"),
		{Name: "addresses", Type: tComplex, Multi: true, Desc: "Physical mailing addresses.", Sub: []attr{
			str("formatted", "The full address."), str("streetAddress", "The street."), str("locality", "The city."),
			str("region", "The state or region."), str("postalCode", "The postal code."), str("country", "The country."),
			str("type", "A label: work, home, other."), {Name: "primary", Type: tBoolean, Desc: "The primary address."},
		}},
		{Name: "groups", Type: tComplex, Multi: true, Mutability: "readOnly", Desc: "Groups are changed through the Group resource.", Sub: []attr{
			{Name: "value", Type: tString, CaseExact: true, Desc: "The group's id."}, {Name: "$ref", Type: tReference, Desc: "The group's URI."},
			str("display", "The group's displayName."), str("type", "direct."),
		}},
		multiComplex("entitlements", "Entitlements."),
		multiComplex("roles", "Roles (kept as sent; org roles come from groups)."),
		multiComplex("x509Certificates", "Certificates."),
	}}
	enterpriseDef = schemaDef{ID: enterpriseSchema, Name: "EnterpriseUser", Desc: "Enterprise User", Attrs: []attr{
		str("employeeNumber", "The employee number."), str("costCenter", "The cost center."), str("organization", "The organization."),
		str("division", "The division."), str("department", "The department."),
		{Name: "manager", Type: tComplex, Desc: "The user's manager.", Sub: []attr{
			{Name: "value", Type: tString, CaseExact: true, Desc: "The manager's id."}, {Name: "$ref", Type: tReference, Desc: "The manager's URI."},
			{Name: "displayName", Type: tString, Mutability: "readOnly", Desc: "The manager's displayName."},
		}},
	}}
	groupDef = schemaDef{ID: groupSchema, Name: "Group", Desc: "Group; its displayName maps to an org role through the directory's groupRoles.", Attrs: []attr{
		{Name: "displayName", Type: tString, Required: true, Unique: true, Desc: "The group's name, unique within the directory."},
		{Name: "members", Type: tComplex, Multi: true, Desc: "The Users of the directory in the group.", Sub: []attr{
			{Name: "value", Type: tString, CaseExact: true, Mutability: "immutable", Desc: "The member's id."},
			{Name: "$ref", Type: tReference, Mutability: "immutable", Desc: "The member's URI."},
			{Name: "display", Type: tString, Desc: "The member's name."},
			{Name: "type", Type: tString, Mutability: "immutable", Desc: "User."},
		}},
	}}
)

// The attributes every resource has (RFC 7643 §3.1), apart from the schemas'.
var commonAttrs = []attr{
	{Name: "id", Type: tString, CaseExact: true, Mutability: "readOnly", Returned: "always", Unique: true, Desc: "The resource's id."},
	{Name: "externalId", Type: tString, CaseExact: true, Desc: "The IdP's id of the resource."},
	{Name: "meta", Type: tComplex, Mutability: "readOnly", Desc: "Resource metadata.", Sub: []attr{
		{Name: "resourceType", Type: tString, CaseExact: true, Mutability: "readOnly"},
		{Name: "created", Type: tDateTime, Mutability: "readOnly"},
		{Name: "lastModified", Type: tDateTime, Mutability: "readOnly"},
		{Name: "location", Type: tReference, CaseExact: true, Mutability: "readOnly"},
		{Name: "version", Type: tString, CaseExact: true, Mutability: "readOnly"},
	}},
}

// resourceType is a kind of resource and its schemas.
type resourceType struct {
	Name, Endpoint string
	Core           schemaDef
	Extensions     []schemaDef
}

var (
	userType  = &resourceType{Name: "User", Endpoint: "/Users", Core: userDef, Extensions: []schemaDef{enterpriseDef}}
	groupType = &resourceType{Name: "Group", Endpoint: "/Groups", Core: groupDef}
)

// find is the attribute of attrs named name, ignoring case (RFC 7643 §2.1).
func find(attrs []attr, name string) (attr, bool) {
	for _, a := range attrs {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return attr{}, false
}

// topAttrs are the core schema's attributes and the common ones.
func (rt *resourceType) topAttrs() []attr {
	return append(append([]attr(nil), commonAttrs...), rt.Core.Attrs...)
}

// extension is the extension schema whose URN is uri, ignoring case.
func (rt *resourceType) extension(uri string) (schemaDef, bool) {
	for _, e := range rt.Extensions {
		if strings.EqualFold(e.ID, uri) {
			return e, true
		}
	}
	return schemaDef{}, false
}

// lookup is m's member named name, ignoring case, and the spelling it has in m.
func lookup(m map[string]any, name string) (any, string, bool) {
	if v, ok := m[name]; ok {
		return v, name, true
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, k, true
		}
	}
	return nil, "", false
}
