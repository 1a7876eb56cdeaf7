package auditstream

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditstream"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/modules/auditstream/sink"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

// maxStreams bounds a project's streams: each one reads the whole trail again.
const maxStreams = 10

// maxActions bounds a filter.
const maxActions = 50

// secretPrefix marks a Standard Webhooks signing secret; the rest is its base64 key.
const secretPrefix = "whsec_"

// Service manages a project's audit streams. It imports no HTTP.
type Service struct {
	ent     *ent.Client
	keys    *secret.Keyring
	policy  outbound.Policy
	chain   *audit.Recorder
	clock   clock.Clock
	targets *targets
	worker  *worker
}

// The fields each type's body may carry, beside type, format and filter (SPEC §28).
var fieldsOf = map[string][]string{
	"https":  {"url"},
	"otlp":   {"url"},
	"syslog": {"host", "port", "tls"},
	"s3":     {"endpoint", "region", "bucket", "prefix", "accessKeyId", "secretAccessKey", "pathStyle"},
}

var types = []string{"https", "otlp", "s3", "syslog"}

// bucketName is S3's rule for bucket names (3–63 lower-case letters, digits, dots and
// hyphens, a letter or digit at each end).
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// Stream is a stream as listed: its target (never a secret) and its delivery's state.
type Stream struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Format string `json:"format"`
	Filter Filter `json:"filter"`

	URL         *string `json:"url,omitempty"`
	Host        *string `json:"host,omitempty"`
	Port        *int    `json:"port,omitempty"`
	TLS         *bool   `json:"tls,omitempty"`
	Endpoint    *string `json:"endpoint,omitempty"`
	Region      *string `json:"region,omitempty"`
	Bucket      *string `json:"bucket,omitempty"`
	Prefix      *string `json:"prefix,omitempty"`
	AccessKeyID *string `json:"accessKeyId,omitempty"`
	PathStyle   *bool   `json:"pathStyle,omitempty"`

	// Status is active, failing (retrying with backoff) or paused (after 24 h of
	// failure, until resumed or replayed).
	Status          string     `json:"status"`
	Cursor          int64      `json:"cursor"`
	Lag             int64      `json:"lag"`
	LastDeliveredID *string    `json:"lastDeliveredId"`
	LastError       *string    `json:"lastError"`
	FailingSince    *time.Time `json:"failingSince"`
	NextAttemptAt   *time.Time `json:"nextAttemptAt"`
	PausedAt        *time.Time `json:"pausedAt"`
	CreatedAt       time.Time  `json:"createdAt"`
}

// Filter picks the events a stream sends.
type Filter struct {
	Actions []string `json:"actions"`
}

// Created is a new stream with, for https, its one-time signing secret.
type Created struct {
	Stream
	Secret string `json:"secret,omitempty"`
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func view(st *ent.AuditStream, head int64) Stream {
	actions := st.Actions
	if actions == nil {
		actions = []string{}
	}
	v := Stream{ID: st.ID, Type: st.Type.String(), Format: st.Format.String(), Filter: Filter{Actions: actions},
		Cursor: st.Cursor, Lag: max(head-st.Cursor, 0), LastDeliveredID: st.LastDeliveredID, LastError: st.LastError,
		FailingSince: utc(st.FailingSince), NextAttemptAt: utc(st.NextAttemptAt), PausedAt: utc(st.PausedAt),
		CreatedAt: st.CreatedAt.UTC(), Status: "active"}
	switch {
	case st.PausedAt != nil:
		v.Status = "paused"
	case st.FailingSince != nil:
		v.Status = "failing"
	}
	switch st.Type {
	case auditstream.TypeHTTPS, auditstream.TypeOtlp:
		v.URL = st.URL
	case auditstream.TypeSyslog:
		tls := st.TLS
		v.Host, v.Port, v.TLS = st.Host, st.Port, &tls
	case auditstream.TypeS3:
		ps := st.PathStyle
		v.Endpoint, v.Region, v.Bucket, v.Prefix, v.AccessKeyID, v.PathStyle = st.Endpoint, st.Region, st.Bucket, st.Prefix, st.AccessKeyID, &ps
	}
	return v
}

// Create reads a create body (SPEC §28) and adds the stream. Every violation is listed in
// one validation_failed answer.
func (s *Service) Create(ctx context.Context, projectID string, creator *string, raw []byte) (Created, error) {
	f := jsonbody.Read(raw)
	typ, st := f.String("type")
	if st != jsonbody.OK {
		f.Fail("type", "required: one of https, s3, syslog or otlp")
	} else if _, ok := fieldsOf[typ]; !ok {
		f.Fail("type", "unknown type "+strconv.Quote(typ)+": one of https, s3, syslog or otlp")
	} else if !s.targets.has(typ) {
		f.Fail("type", typ+" streams are not available in this build")
	}
	format := sink.Native
	switch v, st := f.String("format"); st {
	case jsonbody.Absent, jsonbody.Null:
	case jsonbody.OK:
		switch {
		case v != sink.Native && v != sink.OCSF:
			f.Fail("format", "unknown format "+strconv.Quote(v)+": native or ocsf")
		case !s.targets.renders(v):
			f.Fail("format", v+" is not available in this build")
		default:
			format = v
		}
	default:
		f.Fail("format", "must be native or ocsf")
	}
	actions := readFilter(f)
	for _, name := range slices.Sorted(maps.Keys(f.Object)) {
		if name == "type" || name == "format" || name == "filter" {
			continue
		}
		if allowed, known := fieldsOf[typ]; known && !slices.Contains(allowed, name) {
			f.Fail(name, "not a field of "+typ+" streams")
		} else if !known && !slices.ContainsFunc(types, func(t string) bool { return slices.Contains(fieldsOf[t], name) }) {
			f.Fail(name, "not a field of any stream")
		}
	}

	id := schema.NewID(schema.AuditStreamIDPrefix)
	// What to write, gathered while reading: the row is created in the transaction below.
	var set []func(c *ent.AuditStreamCreate)
	var key []byte
	switch typ {
	case "https", "otlp":
		url := f.RequiredString("url")
		if url != "" {
			if reason, ok := s.policy.CheckURL(ctx, url); !ok {
				f.Fail("url", reason)
			}
		}
		set = append(set, func(c *ent.AuditStreamCreate) { c.SetURL(url) })
		if typ == "https" {
			key = make([]byte, 24)
			if _, err := rand.Read(key); err != nil {
				return Created{}, err
			}
			sealed, err := sealedSecret.Seal(s.keys, key, id)
			if err != nil {
				return Created{}, err
			}
			set = append(set, func(c *ent.AuditStreamCreate) { c.SetSecretSealed(sealed) })
		}
	case "syslog":
		host := f.RequiredString("host")
		port, isInt, pst := f.Integer("port")
		if pst != jsonbody.OK || !isInt || port < 1 || port > 65535 {
			f.Fail("port", "required integer, 1–65535")
		}
		tls := optionalBool(f, "tls")
		if !tls && !s.policy.AllowHTTP {
			f.Fail("tls", "must be true (plain TCP only with AUTHCORE_WEBHOOK_ALLOW_HTTP=true)")
		}
		if host != "" && pst == jsonbody.OK && isInt && port >= 1 && port <= 65535 {
			if strings.ContainsAny(host, "/?#@ ") {
				f.Fail("host", "must be a host name or an IP address")
			} else if reason, ok := s.policy.CheckURL(ctx, "https://"+net.JoinHostPort(host, strconv.FormatInt(port, 10))+"/"); !ok {
				f.Fail("host", reason)
			}
		}
		set = append(set, func(c *ent.AuditStreamCreate) { c.SetHost(host).SetPort(int(port)).SetTLS(tls) })
	case "s3":
		endpoint := f.RequiredString("endpoint")
		if endpoint != "" {
			if reason, ok := s.policy.CheckURL(ctx, endpoint); !ok {
				f.Fail("endpoint", reason)
			}
		}
		region := f.RequiredString("region")
		bucket := f.RequiredString("bucket")
		if bucket != "" && (!bucketName.MatchString(bucket) || strings.Contains(bucket, "..")) {
			f.Fail("bucket", "must be an S3 bucket name: 3–63 lower-case letters, digits, dots and hyphens")
		}
		var prefix *string
		switch p, st := f.String("prefix"); st {
		case jsonbody.Absent, jsonbody.Null:
		case jsonbody.OK:
			if len(p) > 512 {
				f.Fail("prefix", "must be at most 512 characters")
			}
			prefix = &p
		default:
			f.Fail("prefix", "must be a string")
		}
		accessKeyID := f.RequiredString("accessKeyId")
		secretKey := f.RequiredString("secretAccessKey")
		for _, v := range []struct{ name, value string }{{"region", region}, {"accessKeyId", accessKeyID}, {"secretAccessKey", secretKey}} {
			if len(v.value) > 256 {
				f.Fail(v.name, "must be at most 256 characters")
			}
		}
		sealed, err := sealedS3Secret.Seal(s.keys, []byte(secretKey), id)
		if err != nil {
			return Created{}, err
		}
		pathStyle := optionalBool(f, "pathStyle")
		set = append(set, func(c *ent.AuditStreamCreate) {
			c.SetEndpoint(endpoint).SetRegion(region).SetBucket(bucket).SetNillablePrefix(prefix).
				SetAccessKeyID(accessKeyID).SetSecretAccessKeySealed(sealed).SetPathStyle(pathStyle)
		})
	}
	if err := f.Err(); err != nil {
		return Created{}, err
	}

	// A new stream starts at the head of the chain: what happens from now on. Replay sends
	// the past.
	head, err := s.chain.ChainHead(ctx, projectID)
	if err != nil {
		return Created{}, err
	}
	var created *ent.AuditStream
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.AuditStream.Query().Where(auditstream.ProjectID(projectID)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxStreams {
			return apperr.Conflict("too_many_streams", fmt.Sprintf("a project has at most %d audit streams", maxStreams))
		}
		c := tx.AuditStream.Create().SetID(id).SetProjectID(projectID).SetType(auditstream.Type(typ)).
			SetFormat(auditstream.Format(format)).SetActions(actions).SetNillableCreatedBy(creator).SetCursor(head)
		for _, f := range set {
			f(c)
		}
		created, err = c.Save(ctx)
		return err
	})
	if err != nil {
		return Created{}, err
	}
	out := Created{Stream: view(created, head)}
	if key != nil {
		out.Secret = secretPrefix + base64.StdEncoding.EncodeToString(key)
	}
	return out, nil
}

// readFilter reads filter { actions: [glob] }: globs of path.Match ("user.*", "*.revoke").
func readFilter(f *jsonbody.Fields) []string {
	raw, st := f.RawObject("filter")
	switch st {
	case jsonbody.Absent, jsonbody.Null:
		return []string{}
	case jsonbody.OK:
	default:
		f.Fail("filter", "must be an object { actions: [glob] }")
		return []string{}
	}
	o, _ := jsonbody.Parse(raw)
	for name := range o {
		if name != "actions" {
			f.Fail("filter."+name, "not a field of a filter")
		}
	}
	actions, st := o.Strings("actions")
	switch st {
	case jsonbody.Absent, jsonbody.Null:
		return []string{}
	case jsonbody.OK:
	default:
		f.Fail("filter.actions", "must be an array of globs")
		return []string{}
	}
	if len(actions) > maxActions {
		f.Fail("filter.actions", fmt.Sprintf("at most %d globs", maxActions))
	}
	for i, a := range actions {
		if _, err := path.Match(a, ""); err != nil || a == "" || len(a) > 200 {
			f.Fail(fmt.Sprintf("filter.actions[%d]", i), "must be a glob of actions, such as user.* or *.revoke")
		}
	}
	return actions
}

func optionalBool(f *jsonbody.Fields, name string) bool {
	v, st := f.Bool(name)
	switch st {
	case jsonbody.Absent, jsonbody.Null:
		return false
	case jsonbody.OK:
		return v
	}
	f.Fail(name, "must be true or false")
	return false
}

var errNotFound = apperr.NotFound("no such audit stream in this project")

// List is the project's streams, newest first.
func (s *Service) List(ctx context.Context, projectID string) ([]Stream, error) {
	sts, err := s.ent.AuditStream.Query().Where(auditstream.ProjectID(projectID)).Order(auditstream.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	head, err := s.chain.ChainHead(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := make([]Stream, len(sts))
	for i, st := range sts {
		out[i] = view(st, head)
	}
	return out, nil
}

func (s *Service) get(ctx context.Context, projectID, id string) (*ent.AuditStream, error) {
	st, err := s.ent.AuditStream.Query().Where(auditstream.ID(id), auditstream.ProjectID(projectID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNotFound
	}
	return st, err
}

// Get is one stream with its lag.
func (s *Service) Get(ctx context.Context, projectID, id string) (Stream, error) {
	st, err := s.get(ctx, projectID, id)
	if err != nil {
		return Stream{}, err
	}
	head, err := s.chain.ChainHead(ctx, projectID)
	if err != nil {
		return Stream{}, err
	}
	return view(st, head), nil
}

// Delete removes one of the project's streams.
func (s *Service) Delete(ctx context.Context, projectID, id string) error {
	n, err := s.ent.AuditStream.Delete().Where(auditstream.ID(id), auditstream.ProjectID(projectID)).Exec(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errNotFound
	}
	return nil
}

// Replay reads { from } — an event id of the project's chain or an RFC 3339 time — and
// sets the stream's cursor back so that the events from there on are sent again, in
// chain order. A paused or failing stream starts afresh.
func (s *Service) Replay(ctx context.Context, projectID, id string, raw []byte) (Stream, error) {
	f := jsonbody.Read(raw)
	from := f.RequiredString("from")
	if err := f.Err(); err != nil {
		return Stream{}, err
	}
	if _, err := s.get(ctx, projectID, id); err != nil {
		return Stream{}, err
	}
	var cursor int64
	if strings.HasPrefix(from, schema.AuditEventIDPrefix) {
		seq, ok, err := s.chain.ChainSeqOf(ctx, projectID, from)
		if err != nil {
			return Stream{}, err
		}
		if !ok {
			return Stream{}, apperr.Validation(apperr.Issue{Field: "from", Reason: "no such event in this project's chain (events are chained within a second of their commit)"})
		}
		cursor = seq - 1
	} else {
		t, err := time.Parse(time.RFC3339Nano, from)
		if err != nil {
			return Stream{}, apperr.Validation(apperr.Issue{Field: "from", Reason: "must be an event id (" + schema.AuditEventIDPrefix + "…) or an RFC 3339 time"})
		}
		seq, ok, err := s.chain.ChainSeqSince(ctx, projectID, t)
		if err != nil {
			return Stream{}, err
		}
		if ok {
			cursor = seq - 1
		} else if cursor, err = s.chain.ChainHead(ctx, projectID); err != nil {
			return Stream{}, err
		}
	}
	n, err := s.ent.AuditStream.Update().Where(auditstream.ID(id), auditstream.ProjectID(projectID)).
		SetCursor(cursor).AddGeneration(1).ClearPausedAt().ClearFailingSince().SetFailures(0).ClearNextAttemptAt().
		Save(ctx)
	if err != nil {
		return Stream{}, err
	}
	if n == 0 {
		return Stream{}, errNotFound
	}
	s.worker.nudge()
	return s.Get(ctx, projectID, id)
}

// Resume starts a paused stream again where it stopped.
func (s *Service) Resume(ctx context.Context, projectID, id string) (Stream, error) {
	n, err := s.ent.AuditStream.Update().Where(auditstream.ID(id), auditstream.ProjectID(projectID), auditstream.PausedAtNotNil()).
		ClearPausedAt().ClearFailingSince().SetFailures(0).ClearNextAttemptAt().Save(ctx)
	if err != nil {
		return Stream{}, err
	}
	if n == 0 {
		if _, err := s.get(ctx, projectID, id); err != nil {
			return Stream{}, err
		}
		return Stream{}, apperr.Conflict("not_paused", "the stream is not paused")
	}
	s.worker.nudge()
	return s.Get(ctx, projectID, id)
}

// TestResult is what the receiver made of a test event.
type TestResult struct {
	Delivered bool    `json:"delivered"`
	EventID   string  `json:"eventId"`
	Error     *string `json:"error"`
}

// Test sends one test event (action audit_stream.test, not in the trail) through the
// stream's sink now, and says what the receiver answered. The stream's cursor and state
// are left alone.
func (s *Service) Test(ctx context.Context, projectID, id string) (TestResult, error) {
	st, err := s.get(ctx, projectID, id)
	if err != nil {
		return TestResult{}, err
	}
	e := &ent.AuditEvent{ID: schema.NewID(schema.AuditEventIDPrefix), ProjectID: projectID, Action: "audit_stream.test",
		Metadata: map[string]any{"streamId": st.ID}, CreatedAt: s.clock.Now()}
	ev, err := s.targets.event(st.Format.String(), e)
	if err != nil {
		return TestResult{}, err
	}
	res := TestResult{EventID: e.ID}
	if err := s.worker.sendBatch(ctx, st, []sink.Event{ev}); err != nil {
		msg := err.Error()
		res.Error = &msg
	} else {
		res.Delivered = true
	}
	return res, nil
}

// renderNative is an event as the native format shows it: the audit endpoint's view
// (SPEC §7) with who acted beyond an id, the org, the request and the chain's link.
func renderNative(e *ent.AuditEvent) (json.RawMessage, error) {
	var seq int64
	if e.ChainSeq != nil {
		seq = *e.ChainSeq
	}
	hash := ""
	if e.Hash != nil {
		hash = *e.Hash
	}
	v := audit.ViewOf(e)
	if v.Metadata == nil {
		v.Metadata = map[string]any{}
	}
	return json.Marshal(native{View: v, Seq: seq, Hash: hash})
}

// native is the audit endpoint's view of an event with its place and link in the chain.
type native struct {
	audit.View
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}
