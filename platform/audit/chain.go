package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/authcore/authcore/ent"
)

// linked is what an event's link covers: every stored field but the link itself, so an
// edited field, a deleted event or two swapped events break the chain from there on.
type linked struct {
	Seq       int64          `json:"seq"`
	ID        string         `json:"id"`
	ProjectID string         `json:"projectId"`
	Action    string         `json:"action"`
	ActorID   *string        `json:"actorId"`
	ActorType *string        `json:"actorType"`
	Act       map[string]any `json:"act"`
	OrgID     *string        `json:"orgId"`
	RequestID *string        `json:"requestId"`
	IPHash    *string        `json:"ipHash"`
	UserAgent *string        `json:"userAgent"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt string         `json:"createdAt"`
	Previous  string         `json:"previous"`
}

// Link is e's hash in its project's chain (SPEC §28) at place seq after the link prev
// ("" for the first): the hex SHA-256 of the RFC 8785 canonical JSON of e's fields, seq
// and prev. Canonical JSON, from a library, because the same event must hash the same
// after a round trip through either store and any JSON encoder.
func Link(prev string, seq int64, e *ent.AuditEvent) (string, error) {
	b, err := json.Marshal(linked{
		Seq: seq, ID: e.ID, ProjectID: e.ProjectID, Action: e.Action, ActorID: e.ActorID, ActorType: e.ActorType,
		Act: e.Act, OrgID: e.OrgID, RequestID: e.RequestID, IPHash: e.IPHash, UserAgent: e.UserAgent,
		Metadata: e.Metadata, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano), Previous: prev,
	})
	if err != nil {
		return "", err
	}
	canonical, err := jcs.Transform(b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:]), nil
}
