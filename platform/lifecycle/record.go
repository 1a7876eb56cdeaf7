package lifecycle

import (
	"bytes"
	"encoding/json"
	"time"
)

// Records and answers are encoded by hand, field by field, because their fields are the
// kind's: what every kind has, its own fields by their JSON names (a column's name in
// camel case: agent_name → agentName), in its schema's order.

// MarshalJSON is the record: { id, projectId, <own fields>, createdBy, createdAt,
// expiresAt, lastUsedAt, usage24h, <hint> } — for agent tokens and badges, exactly the
// seed's records.
func (r Record) MarshalJSON() ([]byte, error) {
	var b fields
	b.add("id", r.ID)
	b.add("projectId", r.ProjectID)
	r.addOwn(&b)
	b.add("createdBy", r.CreatedBy)
	b.add("createdAt", r.CreatedAt.UTC())
	b.add("expiresAt", r.ExpiresAt)
	b.add("lastUsedAt", r.LastUsedAt)
	b.add("usage24h", r.Usage24h)
	b.add(camel(r.t.mixin.HintColumn()), r.Hint)
	return b.close()
}

func (r *Row) addOwn(b *fields) {
	for i, c := range r.t.own {
		if c.desc != nil && c.desc.Sensitive {
			continue
		}
		v := r.own[i]
		if t, ok := v.(time.Time); ok {
			v = t.UTC()
		}
		b.add(camel(c.name), v)
	}
}

// meAnswer is a kind's default "who am I" answer: { authenticated, kind, id, projectId,
// <own fields>, expiresAt }.
type meAnswer struct {
	kind string
	r    *Row
}

func (m meAnswer) MarshalJSON() ([]byte, error) {
	var b fields
	b.add("authenticated", true)
	b.add("kind", m.kind)
	b.add("id", m.r.ID)
	b.add("projectId", m.r.ProjectID)
	m.r.addOwn(&b)
	b.add("expiresAt", m.r.ExpiresAt)
	return b.close()
}

// fields writes a JSON object one member at a time, keeping the first error.
type fields struct {
	buf bytes.Buffer
	err error
}

func (f *fields) add(name string, v any) {
	if f.err != nil {
		return
	}
	if f.buf.Len() == 0 {
		f.buf.WriteByte('{')
	} else {
		f.buf.WriteByte(',')
	}
	k, _ := json.Marshal(name)
	f.buf.Write(k)
	f.buf.WriteByte(':')
	raw, err := json.Marshal(v)
	f.err = err
	f.buf.Write(raw)
}

func (f *fields) close() ([]byte, error) {
	if f.buf.Len() == 0 {
		f.buf.WriteByte('{')
	}
	f.buf.WriteByte('}')
	return f.buf.Bytes(), f.err
}
