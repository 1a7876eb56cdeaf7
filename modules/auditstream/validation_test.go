package auditstream_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// issues is the field → reason list of a validation_failed answer.
func issues(t *testing.T, r map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	list, _ := r["issues"].([]any)
	for _, i := range list {
		m := i.(map[string]any)
		out[m["field"].(string)] = m["reason"].(string)
	}
	return out
}

// Each rule of a create body, its own case: 400 validation_failed naming the field, and
// nothing created.
func TestCreateValidation(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))
		syslog := func(kv ...any) map[string]any {
			b := map[string]any{"type": "syslog", "host": "127.0.0.1", "port": 6514, "tls": true}
			for i := 0; i < len(kv); i += 2 {
				b[kv[i].(string)] = kv[i+1]
			}
			return b
		}
		s3 := func(kv ...any) map[string]any {
			b := map[string]any{"type": "s3", "endpoint": r.URL, "region": "us-east-1", "bucket": "audit-logs", "accessKeyId": "AKIA", "secretAccessKey": "s3cret"}
			for i := 0; i < len(kv); i += 2 {
				b[kv[i].(string)] = kv[i+1]
			}
			return b
		}
		https := func(kv ...any) map[string]any {
			b := map[string]any{"type": "https", "url": r.URL}
			for i := 0; i < len(kv); i += 2 {
				b[kv[i].(string)] = kv[i+1]
			}
			return b
		}
		many := make([]string, 51)
		for i := range many {
			many[i] = fmt.Sprintf("a%d.*", i)
		}
		for _, c := range []struct {
			rule   string
			body   any
			field  string
			reason string
		}{
			{"the body is an object", "[]", "body", "JSON object"},
			{"type is required", map[string]any{"url": r.URL}, "type", "required"},
			{"an unknown type is refused", map[string]any{"type": "kafka"}, "type", `unknown type "kafka"`},
			{"an unknown format is refused", https("format", "xml"), "format", `unknown format "xml"`},
			{"format is a string", https("format", 1), "format", "native or ocsf"},
			{"filter is an object", https("filter", []string{"user.*"}), "filter", "must be an object"},
			{"filter has only actions", https("filter", map[string]any{"events": []string{"x"}}), "filter.events", "not a field"},
			{"filter.actions is an array of strings", https("filter", map[string]any{"actions": "user.*"}), "filter.actions", "array of globs"},
			{"a glob must be valid", https("filter", map[string]any{"actions": []string{"user.*", "[a"}}), "filter.actions[1]", "glob"},
			{"a glob is not empty", https("filter", map[string]any{"actions": []string{""}}), "filter.actions[0]", "glob"},
			{"at most 50 globs", https("filter", map[string]any{"actions": many}), "filter.actions", "at most 50"},
			{"https needs a url", map[string]any{"type": "https"}, "url", "required"},
			{"the url is absolute", https("url", "not a url"), "url", "absolute URL"},
			{"the url is https or http", https("url", "ftp://example.com/x"), "url", "https"},
			{"no credentials in the url", https("url", "https://user:pw@127.0.0.1/"), "url", "credentials"},
			{"never a metadata address", https("url", "https://169.254.169.254/latest"), "url", "link-local"},
			{"never a system port", https("url", "https://93.184.215.14:22/"), "url", "port"},
			{"otlp needs a url", map[string]any{"type": "otlp"}, "url", "required"},
			{"a field of another type is refused", https("bucket", "b"), "bucket", "not a field of https streams"},
			{"a field of no type is refused", https("colour", "blue"), "colour", "not a field of https streams"},
			{"syslog needs a host", syslog("host", nil), "host", "required"},
			{"syslog's host is a name or an address", syslog("host", "example.com/x"), "host", "host name or an IP address"},
			{"syslog's host follows the outbound rules", syslog("host", "169.254.169.254"), "host", "link-local"},
			{"syslog needs a port", syslog("port", nil), "port", "1–65535"},
			{"the port is an integer", syslog("port", "6514"), "port", "integer"},
			{"the port is in range", syslog("port", 70000), "port", "1–65535"},
			{"a system port is refused", syslog("port", 514), "host", "port must be"},
			{"tls is a boolean", syslog("tls", "yes"), "tls", "true or false"},
			{"s3 needs an endpoint", s3("endpoint", nil), "endpoint", "required"},
			{"the endpoint follows the outbound rules", s3("endpoint", "http://169.254.169.254/"), "endpoint", "link-local"},
			{"s3 needs a region", s3("region", nil), "region", "required"},
			{"s3 needs a bucket", s3("bucket", nil), "bucket", "required"},
			{"the bucket is an S3 bucket name", s3("bucket", "Audit_Logs"), "bucket", "S3 bucket name"},
			{"the prefix is a string", s3("prefix", 5), "prefix", "string"},
			{"s3 needs an access key id", s3("accessKeyId", nil), "accessKeyId", "required"},
			{"s3 needs a secret key", s3("secretAccessKey", nil), "secretAccessKey", "required"},
			{"pathStyle is a boolean", s3("pathStyle", "yes"), "pathStyle", "true or false"},
		} {
			t.Run(c.rule, func(t *testing.T) {
				got := issues(t, w.post(w.streams(), c.body).Expect(t, 400, map[string]any{"code": "validation_failed"}))
				if !strings.Contains(got[c.field], c.reason) {
					t.Fatalf("issues %v: want %s: …%s…", got, c.field, c.reason)
				}
			})
		}
		t.Run("every issue is listed at once", func(t *testing.T) {
			got := issues(t, w.post(w.streams(), map[string]any{"type": "https", "url": "nope", "format": "xml", "filter": map[string]any{"actions": []string{"["}}, "port": 1}).
				Expect(t, 400, map[string]any{"code": "validation_failed"}))
			for _, f := range []string{"url", "format", "filter.actions[0]", "port"} {
				if got[f] == "" {
					t.Fatalf("issues %v: %s is missing", got, f)
				}
			}
		})
		if n := len(w.get(t, w.streams())["streams"].([]any)); n != 0 {
			t.Fatalf("%d streams after refused bodies", n)
		}
		t.Run("every type and format this build sends is accepted", func(t *testing.T) {
			for _, body := range []map[string]any{s3("pathStyle", true), syslog(), https("format", "ocsf"),
				{"type": "otlp", "url": r.URL + "/v1/logs", "format": "ocsf"}} {
				got := w.post(w.streams(), body).Expect(t, 201, nil)
				w.a.Do(apptest.Req{Method: "DELETE", Path: w.streams() + "/" + got["id"].(string), Header: w.admin.Bearer()}).Expect(t, 200, nil)
			}
		})
		t.Run("at most 10 streams", func(t *testing.T) {
			for range 10 {
				w.addHTTPS(t, r, nil)
			}
			w.post(w.streams(), https()).Expect(t, 409, map[string]any{"code": "too_many_streams"})
		})
		t.Run("only project admins", func(t *testing.T) {
			other := w.a.SignUp(t)
			w.a.Do(apptest.Req{Method: "POST", Path: w.streams(), Body: https(), Header: other.Bearer()}).Expect(t, 403, nil)
			w.a.Do(apptest.Req{Path: w.streams(), Header: other.Bearer()}).Expect(t, 403, nil)
		})
		t.Run("another project's stream is not found", func(t *testing.T) {
			id := w.get(t, w.streams())["streams"].([]any)[0].(map[string]any)["id"].(string)
			prj := w.a.CreateProject(t, w.admin)
			other := "/v1/projects/" + prj + "/audit-streams/" + id
			w.a.Do(apptest.Req{Path: other, Header: w.admin.Bearer()}).Expect(t, 404, map[string]any{"code": "not_found"})
			w.post(other+"/replay", map[string]any{"from": "2020-01-01T00:00:00Z"}).Expect(t, 404, map[string]any{"code": "not_found"})
			w.post(other+"/test", nil).Expect(t, 404, map[string]any{"code": "not_found"})
			w.a.Do(apptest.Req{Method: "DELETE", Path: other, Header: w.admin.Bearer()}).Expect(t, 404, map[string]any{"code": "not_found"})
		})
	})
}

// Without AUTHCORE_WEBHOOK_ALLOW_HTTP: https only, never loopback, and syslog over TLS only.
func TestProductionTargetRules(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"type": "https", "url": "http://93.184.215.14/"}, "url"},
		{map[string]any{"type": "https", "url": "https://127.0.0.1/"}, "url"},
		{map[string]any{"type": "https", "url": "https://10.1.2.3/"}, "url"},
		{map[string]any{"type": "otlp", "url": "https://localhost/v1/logs"}, "url"},
		{map[string]any{"type": "syslog", "host": "93.184.215.14", "port": 6514}, "tls"},
		{map[string]any{"type": "syslog", "host": "192.168.0.1", "port": 6514, "tls": true}, "host"},
	} {
		got := issues(t, w.post(w.streams(), c.body).Expect(t, 400, map[string]any{"code": "validation_failed"}))
		if got[c.field] == "" {
			t.Fatalf("%v: issues %v, want one of %s", c.body, got, c.field)
		}
	}
	w.post(w.streams(), map[string]any{"type": "https", "url": "https://93.184.215.14/hook"}).Expect(t, 201, nil)
}
