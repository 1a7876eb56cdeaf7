package sink

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	ocsfapp "github.com/valllabh/ocsf-schema-golang/ocsf/v1_2_0/events/application"
	ocsfiam "github.com/valllabh/ocsf-schema-golang/ocsf/v1_2_0/events/iam"
	ocsfschema "github.com/valllabh/ocsf-schema-golang/ocsfvalidate/1.2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/authcore/authcore/ent"
)

func ptr[T any](v T) *T { return &v }

var ocsfAt = time.Date(2026, 11, 28, 9, 30, 0, 250_000_000, time.UTC)

func auditEvent(action string, edit func(*ent.AuditEvent)) *ent.AuditEvent {
	e := &ent.AuditEvent{
		ID: "aud_01JDEMO", ProjectID: "prj_1", Action: action, CreatedAt: ocsfAt,
		ActorID: ptr("usr_1"), ActorType: ptr("user"), IPHash: ptr("9f86d081884c7d65"), UserAgent: ptr("Mozilla/5.0"),
		RequestID: ptr("req_1"), OrgID: ptr("org_1"), ChainSeq: ptr(int64(42)), Hash: ptr("ab12"),
		Metadata: map[string]any{"via": "password"},
	}
	if edit != nil {
		edit(e)
	}
	return e
}

// ocsfClassNames are the OCSF 1.2 schema's names of the classes RenderOCSF uses.
var ocsfClassNames = map[int]string{3002: "authentication", 3001: "account_change", 6003: "api_activity"}

// validOCSF checks an event against the OCSF 1.2 JSON schema of its class (required
// attributes, types, enumerations, class and category constants), and that it uses no
// attribute name the class lacks (the schema's generated protobuf messages refuse an
// unknown field; unmapped is free-form by definition, so it is left out of that check).
func validOCSF(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	uid := int(ev["class_uid"].(float64))
	name, ok := ocsfClassNames[uid]
	if !ok {
		t.Fatalf("class_uid %d", uid)
	}
	if err := ocsfschema.Validate(name, raw); err != nil {
		t.Fatalf("not a valid OCSF 1.2 %s: %v\n%s", name, err, raw)
	}
	var msg proto.Message
	switch uid {
	case 3002:
		msg = &ocsfiam.Authentication{}
	case 3001:
		msg = &ocsfiam.AccountChange{}
	case 6003:
		msg = &ocsfapp.ApiActivity{}
	}
	known := map[string]any{}
	for k, v := range ev {
		if k != "unmapped" {
			known[k] = v
		}
	}
	b, _ := json.Marshal(known)
	if err := protojson.Unmarshal(b, msg); err != nil {
		t.Fatalf("an attribute OCSF 1.2 %s does not have: %v\n%s", name, err, raw)
	}
	// Common to every class.
	md := ev["metadata"].(map[string]any)
	if md["uid"] != "aud_01JDEMO" || md["version"] != OCSFVersion || md["product"].(map[string]any)["name"] != "authcore" {
		t.Errorf("metadata %v", md)
	}
	if ev["time"] != float64(ocsfAt.UnixMilli()) {
		t.Errorf("time %v, want %d ms", ev["time"], ocsfAt.UnixMilli())
	}
	if ev["type_uid"] != float64(uid*100)+ev["activity_id"].(float64) {
		t.Errorf("type_uid %v", ev["type_uid"])
	}
	if strings.Contains(string(raw), `"ip"`) {
		t.Errorf("an address field in %s", raw)
	}
	return ev
}

func TestOCSFAuthentication(t *testing.T) {
	for _, tc := range []struct {
		action         string
		activity, stat float64
	}{
		{"user.signin", 1, 1},
		{"user.sign_in_failed", 1, 2},
		{"user.sign_out", 2, 1},
		{"session.revoke_all", 2, 1},
		{"session.theft_detected", 99, 2},
	} {
		t.Run(tc.action, func(t *testing.T) {
			raw, err := RenderOCSF(auditEvent(tc.action, func(e *ent.AuditEvent) {
				switch tc.action {
				case "session.revoke_all":
					e.ActorID = ptr("usr_admin")
					e.Metadata = map[string]any{"userId": "usr_1", "revoked": 3}
				case "session.theft_detected":
					e.ActorID, e.ActorType = nil, ptr("system")
					e.Metadata = map[string]any{"userId": "usr_1", "sessionHandle": "ses_1"}
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			ev := validOCSF(t, raw)
			if ev["class_uid"] != 3002.0 || ev["category_uid"] != 3.0 || ev["activity_id"] != tc.activity || ev["status_id"] != tc.stat {
				t.Fatalf("class %v activity %v status %v", ev["class_uid"], ev["activity_id"], ev["status_id"])
			}
			if u := ev["user"].(map[string]any); u["uid"] != "usr_1" {
				t.Errorf("user %v, want the account signed in or out", u)
			}
			if src := ev["src_endpoint"].(map[string]any); src["uid"] != "9f86d081884c7d65" {
				t.Errorf("src_endpoint %v, want the ip hash", src)
			}
			if ev["http_request"].(map[string]any)["user_agent"] != "Mozilla/5.0" {
				t.Errorf("http_request %v", ev["http_request"])
			}
		})
	}
}

func TestOCSFAccountChange(t *testing.T) {
	for action, activity := range map[string]float64{
		"user.signup": 1, "user.password_change": 3, "user.password_reset": 4,
		"user.mfa_enrol": 10, "user.mfa_remove": 11, "user.identity_link": 99,
	} {
		t.Run(action, func(t *testing.T) {
			raw, err := RenderOCSF(auditEvent(action, nil))
			if err != nil {
				t.Fatal(err)
			}
			ev := validOCSF(t, raw)
			if ev["class_uid"] != 3001.0 || ev["activity_id"] != activity || ev["status_id"] != 1.0 {
				t.Fatalf("class %v activity %v, want 3001 %v", ev["class_uid"], ev["activity_id"], activity)
			}
			if u := ev["user"].(map[string]any); u["uid"] != "usr_1" || u["org"].(map[string]any)["uid"] != "org_1" {
				t.Errorf("user %v", u)
			}
			un := ev["unmapped"].(map[string]any)
			if un["metadata"].(map[string]any)["via"] != "password" || un["hash"] != "ab12" {
				t.Errorf("unmapped %v", un)
			}
		})
	}
}

func TestOCSFAPIActivity(t *testing.T) {
	for _, tc := range []struct {
		action   string
		edit     func(*ent.AuditEvent)
		activity float64
		actor    map[string]any
	}{
		{"ai_token.create", nil, 1, map[string]any{"user": map[string]any{"uid": "usr_1", "type_id": 1.0, "type": "User", "org": map[string]any{"uid": "org_1"}}}},
		{"service_badge.roll", func(e *ent.AuditEvent) {
			e.ActorType, e.ActorID = ptr("agent_token"), ptr("agt_9")
			e.Act = map[string]any{"sub": "usr_1"}
		}, 3, map[string]any{"user": map[string]any{"uid": "agt_9", "type_id": 99.0, "type": "agent_token", "org": map[string]any{"uid": "org_1"}}}},
		{"service_badge.revoke", func(e *ent.AuditEvent) { e.ActorType, e.ActorID = ptr("client"), ptr("cli_3") }, 4,
			map[string]any{"app_uid": "cli_3", "app_name": "client"}},
		{"oauth.grant_revoke", func(e *ent.AuditEvent) {
			e.ActorType, e.ActorID, e.IPHash, e.UserAgent, e.RequestID, e.OrgID = ptr("system"), nil, nil, nil, nil, nil
		}, 4, map[string]any{"app_name": "authcore"}},
		{"trust.id_jag_issue", func(e *ent.AuditEvent) { e.ActorType, e.ActorID = ptr("scim_directory"), ptr("dir_1") }, 1,
			map[string]any{"app_uid": "dir_1", "app_name": "scim_directory"}},
		{"project.policy_update", func(e *ent.AuditEvent) { e.ActorType = nil }, 3,
			map[string]any{"user": map[string]any{"uid": "usr_1", "type_id": 1.0, "type": "User", "org": map[string]any{"uid": "org_1"}}}},
		{"oauth.backchannel_approve", nil, 3, nil},
		{"session.something_new", nil, 99, nil},
	} {
		t.Run(tc.action, func(t *testing.T) {
			e := auditEvent(tc.action, tc.edit)
			raw, err := RenderOCSF(e)
			if err != nil {
				t.Fatal(err)
			}
			ev := validOCSF(t, raw)
			if ev["class_uid"] != 6003.0 || ev["category_uid"] != 6.0 || ev["activity_id"] != tc.activity {
				t.Fatalf("class %v activity %v, want 6003 %v", ev["class_uid"], ev["activity_id"], tc.activity)
			}
			api := ev["api"].(map[string]any)
			if api["operation"] != tc.action {
				t.Errorf("api %v", api)
			}
			if e.RequestID != nil && (api["request"].(map[string]any)["uid"] != "req_1" || ev["metadata"].(map[string]any)["correlation_uid"] != "req_1") {
				t.Errorf("request id missing: %v", raw)
			}
			if tc.actor != nil {
				got, _ := json.Marshal(ev["actor"])
				want, _ := json.Marshal(tc.actor)
				if string(got) != string(want) {
					t.Errorf("actor %s, want %s", got, want)
				}
			}
			if e.Act != nil && ev["unmapped"].(map[string]any)["act"].(map[string]any)["sub"] != "usr_1" {
				t.Errorf("delegation chain lost: %s", raw)
			}
		})
	}
}

// Every action authcore records today lands in the class docs/audit-streams.md names.
func TestOCSFMapsEveryRecordedAction(t *testing.T) {
	want := map[string]int{
		"user.signin": 3002, "session.revoke": 3002, "session.revoke_all": 3002, "session.theft_detected": 3002, "user.mfa_recovery_used": 3002,
		"user.password_reset": 3001, "user.mfa_enrol": 3001, "user.mfa_remove": 3001, "user.email_proven": 3001,
		"user.identity_link": 3001, "user.identity_unlink": 3001,
		"org.member_deprovisioned": 3001, "org.member_reprovisioned": 3001,
	}
	for _, a := range []string{
		"ai_token.create", "ai_token.roll", "ai_token.revoke", "service_badge.create", "service_badge.roll", "service_badge.revoke",
		"service_badge.scopes_update", "service_badge.key_add", "service_badge.key_remove", "deploy_key.revoke",
		"credential.leak_revoke", "oauth_access_token.revoke", "oauth.grant_create", "oauth.grant_revoke",
		"oauth_resource.create", "oauth_resource.delete", "oauth.backchannel_request", "oauth.backchannel_approve",
		"oauth.backchannel_deny", "oauth.backchannel_token", "oauth.backchannel_cancel", "oauth.backchannel_client_set",
		"oauth.backchannel_client_delete", "oauth.authorization_details_type_create", "oauth.authorization_details_type_update",
		"oauth.authorization_details_type_delete", "project.create", "project.member_add", "project.member_remove",
		"project.policy_update", "project.invitation_create", "project.invitation_revoke", "trust.issuer_add",
		"trust.issuer_remove", "trust.authorization_server_add", "trust.authorization_server_remove", "trust.jwt_bearer",
		"trust.id_jag_issue", "auth.methods_update", "auth.provider_create", "auth.provider_update", "auth.provider_delete",
		"user.connection_create", "user.connection_update", "user.connection_revoke",
	} {
		want[a] = 6003
	}
	for action, class := range want {
		raw, err := RenderOCSF(auditEvent(action, nil))
		if err != nil {
			t.Fatal(err)
		}
		ev := validOCSF(t, raw)
		if ev["class_uid"] != float64(class) {
			t.Errorf("%s: class %v, want %d", action, ev["class_uid"], class)
		}
		if class == 6003 && ev["activity_id"] == 99.0 {
			t.Errorf("%s: API Activity Other; its verb should say Create, Update or Delete", action)
		}
	}
}

// The validator used above must catch a missing required attribute, or the tests above
// prove nothing.
func TestOCSFValidatorRefusesAnEventWithoutItsUser(t *testing.T) {
	raw, err := RenderOCSF(auditEvent("user.signin", nil))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	_ = json.Unmarshal(raw, &ev)
	delete(ev, "user")
	b, _ := json.Marshal(ev)
	if err := ocsfschema.Validate("authentication", b); err == nil {
		t.Fatal("an Authentication without its user passed the OCSF schema")
	}
	ev["user"] = map[string]any{"uid": "usr_1"}
	ev["correlation_id"] = "x"
	b, _ = json.Marshal(ev)
	if err := protojson.Unmarshal(b, &ocsfiam.Authentication{}); err == nil {
		t.Fatal("an attribute OCSF does not have passed")
	}
}

func BenchmarkRenderOCSF(b *testing.B) {
	e := auditEvent("service_badge.roll", func(e *ent.AuditEvent) { e.Act = map[string]any{"sub": "usr_1"} })
	for range b.N {
		if _, err := RenderOCSF(e); err != nil {
			b.Fatal(err)
		}
	}
}
