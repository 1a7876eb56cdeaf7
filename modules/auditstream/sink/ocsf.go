package sink

import (
	"encoding/json"
	"strings"

	"github.com/authcore/authcore/ent"
)

// OCSFVersion is the Open Cybersecurity Schema Framework version events are rendered in.
const OCSFVersion = "1.2.0"

// An OCSF class an audit event maps to (docs/audit-streams.md has the table).
type ocsfClass struct {
	uid, category          int
	name, categoryName     string
	activities             map[int]string
	needsUser, needsSource bool
}

var (
	ocsfAuthentication = ocsfClass{uid: 3002, category: 3, name: "Authentication", categoryName: "Identity & Access Management",
		activities: map[int]string{1: "Logon", 2: "Logoff", 99: "Other"}, needsUser: true}
	ocsfAccountChange = ocsfClass{uid: 3001, category: 3, name: "Account Change", categoryName: "Identity & Access Management",
		activities: map[int]string{1: "Create", 3: "Password Change", 4: "Password Reset", 10: "MFA Factor Enable", 11: "MFA Factor Disable", 99: "Other"}, needsUser: true}
	ocsfAPIActivity = ocsfClass{uid: 6003, category: 6, name: "API Activity", categoryName: "Application Activity",
		activities: map[int]string{1: "Create", 2: "Read", 3: "Update", 4: "Delete", 99: "Other"}, needsSource: true}
)

// ocsfMapping is what an action says in OCSF terms.
type ocsfMapping struct {
	class    ocsfClass
	activity int
	failure  bool
	severity int // OCSF severity_id: 1 informational, 2 low, 4 high
}

// ocsfExact maps the actions whose class or activity no naming rule finds. The action
// names of SPEC §28 that are not recorded yet (user.sign_in_failed, user.sign_out,
// user.password_change …) are listed under both spellings authcore uses, so they map
// the day they are.
var ocsfExact = map[string]ocsfMapping{
	"user.signin":            {class: ocsfAuthentication, activity: 1},
	"user.sign_in":           {class: ocsfAuthentication, activity: 1},
	"user.signin_failed":     {class: ocsfAuthentication, activity: 1, failure: true, severity: 2},
	"user.sign_in_failed":    {class: ocsfAuthentication, activity: 1, failure: true, severity: 2},
	"user.signout":           {class: ocsfAuthentication, activity: 2},
	"user.sign_out":          {class: ocsfAuthentication, activity: 2},
	"session.revoke":         {class: ocsfAuthentication, activity: 2},
	"session.revoke_all":     {class: ocsfAuthentication, activity: 2},
	"user.mfa_recovery_used": {class: ocsfAuthentication, activity: 99},
	"session.theft_detected": {class: ocsfAuthentication, activity: 99, failure: true, severity: 4},
	"user.signup":            {class: ocsfAccountChange, activity: 1},
	"user.sign_up":           {class: ocsfAccountChange, activity: 1},
	"user.create":            {class: ocsfAccountChange, activity: 1},
	"user.password_change":   {class: ocsfAccountChange, activity: 3},
	"user.password_reset":    {class: ocsfAccountChange, activity: 4},
	"user.mfa_enrol":         {class: ocsfAccountChange, activity: 10},
	"user.mfa_enroll":        {class: ocsfAccountChange, activity: 10},
	"user.mfa_remove":        {class: ocsfAccountChange, activity: 11},
	"user.email_proven":      {class: ocsfAccountChange, activity: 99},
	"user.identity_link":     {class: ocsfAccountChange, activity: 99},
	"user.identity_unlink":   {class: ocsfAccountChange, activity: 99},
	"user.update":            {class: ocsfAccountChange, activity: 99},
	"user.import":            {class: ocsfAccountChange, activity: 1},
	"user.block":             {class: ocsfAccountChange, activity: 5},
	"user.unblock":           {class: ocsfAccountChange, activity: 2},
	"user.delete":            {class: ocsfAccountChange, activity: 6},
	// A directory's deactivation of a person is the account's Disable, its reactivation
	// Enable (SPEC §27), as an admin's block and unblock.
	"org.member_deprovisioned": {class: ocsfAccountChange, activity: 5},
	"org.member_reprovisioned": {class: ocsfAccountChange, activity: 2},
	"credential.leak_revoke":   {class: ocsfAPIActivity, activity: 4, severity: 4},
	"trust.jwt_bearer":         {class: ocsfAPIActivity, activity: 1}, // a token issued
	"oauth.backchannel_token":  {class: ocsfAPIActivity, activity: 1},
	// An org and its memberships are resources a project admin changes (SPEC §26), not
	// accounts: API Activity, with the roles' replacement an update.
	"org.create":        {class: ocsfAPIActivity, activity: 1},
	"org.update":        {class: ocsfAPIActivity, activity: 3},
	"org.delete":        {class: ocsfAPIActivity, activity: 4},
	"org.member_add":    {class: ocsfAPIActivity, activity: 1},
	"org.member_update": {class: ocsfAPIActivity, activity: 3},
	"org.member_remove": {class: ocsfAPIActivity, activity: 4},
	"org.roles_put":     {class: ocsfAPIActivity, activity: 3},
	"org.policy_put":    {class: ocsfAPIActivity, activity: 3},
	"org.domain_add":    {class: ocsfAPIActivity, activity: 1},
	"org.domain_verify": {class: ocsfAPIActivity, activity: 3},
	"org.domain_remove": {class: ocsfAPIActivity, activity: 4},
	// An invitation is a resource an admin creates and revokes; accepting it adds a member.
	"org.invitation_create": {class: ocsfAPIActivity, activity: 1},
	"org.invitation_accept": {class: ocsfAPIActivity, activity: 1},
	"org.invitation_revoke": {class: ocsfAPIActivity, activity: 4},
	// A setup link is made, then spent by whoever holds it (SPEC §26).
	"org.setup_link_create": {class: ocsfAPIActivity, activity: 1},
	"org.setup_link_open":   {class: ocsfAPIActivity, activity: 3},
	// A SCIM directory is a resource its admins manage; what its IdP provisions changes
	// accounts (SPEC §27).
	"scim.directory_create": {class: ocsfAPIActivity, activity: 1},
	"scim.directory_update": {class: ocsfAPIActivity, activity: 3},
	"scim.directory_roll":   {class: ocsfAPIActivity, activity: 3},
	"scim.directory_delete": {class: ocsfAPIActivity, activity: 4},
	"scim.token_revoke":     {class: ocsfAPIActivity, activity: 4},
	"scim.user_create":      {class: ocsfAccountChange, activity: 1},
	"scim.user_update":      {class: ocsfAccountChange, activity: 99},
	"scim.user_delete":      {class: ocsfAccountChange, activity: 6},
	"scim.group_create":     {class: ocsfAPIActivity, activity: 1},
	"scim.group_update":     {class: ocsfAPIActivity, activity: 3},
	"scim.group_delete":     {class: ocsfAPIActivity, activity: 4},
}

// ocsfVerbs maps the last word of any other action (ai_token.create, service_badge.roll,
// oauth.grant_revoke, service_badge.key_add …) to an API Activity.
var ocsfVerbs = map[string]int{
	"create": 1, "add": 1, "set": 1, "issue": 1, "request": 1,
	"read": 2, "list": 2,
	"update": 3, "roll": 3, "approve": 3, "deny": 3,
	"revoke": 4, "delete": 4, "remove": 4, "cancel": 4,
}

func ocsfMap(action string) ocsfMapping {
	if m, ok := ocsfExact[action]; ok {
		if m.severity == 0 {
			m.severity = 1
		}
		return m
	}
	verb := action[strings.LastIndexAny(action, "._")+1:]
	if strings.HasSuffix(action, "_failed") || strings.HasSuffix(action, "_failure") {
		return ocsfMapping{class: ocsfAPIActivity, activity: 99, failure: true, severity: 2}
	}
	if a, ok := ocsfVerbs[verb]; ok {
		return ocsfMapping{class: ocsfAPIActivity, activity: a, severity: 1}
	}
	return ocsfMapping{class: ocsfAPIActivity, activity: 99, severity: 1}
}

// RenderOCSF maps an audit event to an OCSF 1.2 event of class Authentication (3002),
// Account Change (3001) or API Activity (6003). What OCSF has no place for (the event's
// metadata, its delegation chain, its org, its hash) goes into unmapped, so no field of
// the event is lost. The IP address is never known here: src_endpoint.uid carries the
// keyed hash the audit trail stores.
func RenderOCSF(e *ent.AuditEvent) (json.RawMessage, error) {
	m := ocsfMap(e.Action)
	ms := e.CreatedAt.UnixMilli()
	statusID, statusName := 1, "Success"
	if m.failure {
		statusID, statusName = 2, "Failure"
	}
	activityName := m.class.activities[m.activity]
	out := map[string]any{
		"class_uid":     m.class.uid,
		"class_name":    m.class.name,
		"category_uid":  m.class.category,
		"category_name": m.class.categoryName,
		"activity_id":   m.activity,
		"activity_name": activityName,
		"type_uid":      m.class.uid*100 + m.activity,
		"type_name":     m.class.name + ": " + activityName,
		"severity_id":   m.severity,
		"severity":      ocsfSeverities[m.severity],
		"status_id":     statusID,
		"status":        statusName,
		"time":          ms,
		"message":       e.Action,
		"metadata":      ocsfMetadata(e, ms),
		"actor":         ocsfActor(e),
		// OCSF 1.2's cloud profile asks every class for the provider: the events come
		// from authcore's service, whoever hosts it.
		"cloud": map[string]any{"provider": "authcore"},
	}
	if e.IPHash != nil {
		out["src_endpoint"] = map[string]any{"uid": *e.IPHash}
	} else if m.class.needsSource {
		out["src_endpoint"] = map[string]any{}
	}
	if e.UserAgent != nil {
		out["http_request"] = map[string]any{"user_agent": *e.UserAgent}
	}
	if m.class.needsUser {
		out["user"] = ocsfSubject(e)
	}
	if m.class.uid == ocsfAPIActivity.uid {
		api := map[string]any{"operation": e.Action, "service": map[string]any{"name": "authcore"}}
		if e.RequestID != nil {
			api["request"] = map[string]any{"uid": *e.RequestID}
		}
		out["api"] = api
	}
	if un := ocsfUnmapped(e); len(un) > 0 {
		out["unmapped"] = un
	}
	return json.Marshal(out)
}

var ocsfSeverities = map[int]string{1: "Informational", 2: "Low", 4: "High"}

func ocsfMetadata(e *ent.AuditEvent, ms int64) map[string]any {
	md := map[string]any{
		"version":     OCSFVersion,
		"product":     map[string]any{"name": "authcore", "vendor_name": "authcore"},
		"uid":         e.ID,
		"tenant_uid":  e.ProjectID,
		"logged_time": ms,
		"log_name":    "audit",
	}
	if e.RequestID != nil {
		md["correlation_uid"] = *e.RequestID
	}
	if e.ChainSeq != nil {
		md["sequence"] = *e.ChainSeq
	}
	return md
}

// ocsfActor: people and agent tokens act as users (an agent token's type is "Other");
// clients, setup links and SCIM directories act as applications; the system acts as
// authcore itself.
func ocsfActor(e *ent.AuditEvent) map[string]any {
	kind := ""
	if e.ActorType != nil {
		kind = *e.ActorType
	}
	if e.ActorID == nil || kind == "system" {
		return map[string]any{"app_name": "authcore"}
	}
	switch kind {
	case "", "user":
		return map[string]any{"user": ocsfUser(*e.ActorID, 1, "User", e.OrgID)}
	case "agent_token":
		return map[string]any{"user": ocsfUser(*e.ActorID, 99, "agent_token", e.OrgID)}
	default: // client, setup_link, scim_directory and any kind added later
		return map[string]any{"app_uid": *e.ActorID, "app_name": kind}
	}
}

func ocsfUser(uid string, typeID int, typeName string, org *string) map[string]any {
	u := map[string]any{"uid": uid, "type_id": typeID, "type": typeName}
	if org != nil {
		u["org"] = map[string]any{"uid": *org}
	}
	return u
}

// ocsfSubject is the account an Authentication or Account Change is about: the metadata's
// userId when the event names one (an admin revoking someone's sessions), else, for a
// user.* action, the person acting on their own account. A session revoked by an admin
// names no owner, so its subject is Unknown rather than the admin.
func ocsfSubject(e *ent.AuditEvent) map[string]any {
	if id, ok := e.Metadata["userId"].(string); ok && id != "" {
		return ocsfUser(id, 1, "User", e.OrgID)
	}
	if strings.HasPrefix(e.Action, "user.") && e.ActorID != nil && (e.ActorType == nil || *e.ActorType == "user") {
		return ocsfUser(*e.ActorID, 1, "User", e.OrgID)
	}
	return map[string]any{"type_id": 0, "type": "Unknown"}
}

func ocsfUnmapped(e *ent.AuditEvent) map[string]any {
	un := map[string]any{"action": e.Action}
	if len(e.Metadata) > 0 {
		un["metadata"] = e.Metadata
	}
	if e.ActorType != nil {
		un["actor_type"] = *e.ActorType
	}
	if len(e.Act) > 0 {
		un["act"] = e.Act
	}
	if e.OrgID != nil {
		un["org_id"] = *e.OrgID
	}
	if e.Hash != nil {
		un["hash"] = *e.Hash
	}
	return un
}
