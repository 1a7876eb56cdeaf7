package approval

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelclient"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
)

// clientIDPattern is an auth badge client's or an agent token's id.
var clientIDPattern = regexp.MustCompile(`^(cli|tok)_[0-9A-Za-z]{10,36}$`)

// secretPrefix begins a ping signing secret, as a webhook's (Standard Webhooks).
const secretPrefix = "whsec_"

// ClientSettings is how a client takes its outcomes.
type ClientSettings struct {
	ClientID             string    `json:"clientId"`
	DeliveryMode         string    `json:"deliveryMode"`
	NotificationEndpoint *string   `json:"notificationEndpoint"`
	UpdatedAt            time.Time `json:"updatedAt"`
	// Secret signs its pings; shown once, when ping mode is set.
	Secret string `json:"secret,omitempty"`
}

func settingsView(r *ent.BackchannelClient) ClientSettings {
	v := ClientSettings{ClientID: r.ClientID, DeliveryMode: string(r.DeliveryMode), UpdatedAt: r.UpdatedAt.UTC()}
	if r.NotificationEndpoint != "" {
		e := r.NotificationEndpoint
		v.NotificationEndpoint = &e
	}
	return v
}

const (
	actionClientSet    = "oauth.backchannel_client_set"
	actionClientDelete = "oauth.backchannel_client_delete"
)

// SetClient sets how one of the project's clients takes its outcomes: { deliveryMode:
// poll|ping, notificationEndpoint (ping) }. Ping gets a new signing secret each time.
// A registration counts only for a client of this project, so naming another project's
// client changes nothing for it; an agent token must be one of the project's.
func (s *service) SetClient(ctx context.Context, projectID, clientID string, actor *string, raw []byte, origin audit.Origin) (ClientSettings, error) {
	if !clientIDPattern.MatchString(clientID) {
		return ClientSettings{}, errNoClient
	}
	if strings.HasPrefix(clientID, schema.AgentTokenIDPrefix) {
		ok, err := s.isAgentOf(ctx, projectID, clientID)
		if err != nil {
			return ClientSettings{}, err
		}
		if !ok {
			return ClientSettings{}, errNoClient
		}
	}
	f := jsonbody.Read(raw)
	mode := f.RequiredString("deliveryMode")
	if mode != "" && mode != "poll" && mode != "ping" {
		f.Fail("deliveryMode", "must be poll or ping")
	}
	endpoint, st := f.String("notificationEndpoint")
	switch {
	case st == jsonbody.WrongType:
		f.Fail("notificationEndpoint", "must be a string")
	case mode == "ping" && st != jsonbody.OK:
		f.Fail("notificationEndpoint", "required for ping")
	case mode == "poll" && st == jsonbody.OK:
		f.Fail("notificationEndpoint", "only for ping")
	case mode == "ping":
		if reason, ok := s.policy.CheckURL(ctx, endpoint); !ok {
			f.Fail("notificationEndpoint", reason)
		}
	}
	if err := f.Err(); err != nil {
		return ClientSettings{}, err
	}
	var key []byte
	if mode == "ping" {
		key = make([]byte, 24)
		if _, err := rand.Read(key); err != nil {
			return ClientSettings{}, err
		}
	}
	var out *ent.BackchannelClient
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		now := s.clock.Now()
		r, err := tx.BackchannelClient.Query().Where(backchannelclient.ProjectID(projectID), backchannelclient.ClientID(clientID)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return err
		}
		id := schema.NewID(schema.BackchannelClientIDPrefix)
		if r != nil {
			id = r.ID
		}
		sealed := ""
		if key != nil {
			if sealed, err = sealedPingSecret.Seal(s.keys, key, id); err != nil {
				return err
			}
		}
		if r == nil {
			out, err = tx.BackchannelClient.Create().SetID(id).SetProjectID(projectID).SetClientID(clientID).
				SetDeliveryMode(backchannelclient.DeliveryMode(mode)).SetNotificationEndpoint(endpoint).SetSecretSealed(sealed).
				SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		} else {
			out, err = tx.BackchannelClient.UpdateOne(r).SetDeliveryMode(backchannelclient.DeliveryMode(mode)).
				SetNotificationEndpoint(endpoint).SetSecretSealed(sealed).SetUpdatedAt(now).Save(ctx)
		}
		if err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, Action: actionClientSet, Origin: origin,
			Metadata: map[string]any{"clientId": clientID, "deliveryMode": mode, "notificationEndpoint": endpoint}})
		return err
	})
	if err != nil {
		return ClientSettings{}, err
	}
	v := settingsView(out)
	if key != nil {
		v.Secret = secretPrefix + base64.StdEncoding.EncodeToString(key)
	}
	return v, nil
}

// Clients lists the project's clients' settings (those it set; any other client polls).
func (s *service) Clients(ctx context.Context, projectID string) ([]ClientSettings, error) {
	rows, err := s.ent.BackchannelClient.Query().Where(backchannelclient.ProjectID(projectID)).Order(backchannelclient.ByClientID()).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ClientSettings, len(rows))
	for i, r := range rows {
		out[i] = settingsView(r)
	}
	return out, nil
}

// DeleteClient forgets a client's settings: it polls from then on.
func (s *service) DeleteClient(ctx context.Context, projectID, clientID string, actor *string, origin audit.Origin) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.BackchannelClient.Delete().Where(backchannelclient.ProjectID(projectID), backchannelclient.ClientID(clientID)).Exec(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errNoClient
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, Action: actionClientDelete, Origin: origin,
			Metadata: map[string]any{"clientId": clientID}})
		return err
	})
}

// isAgentOf reports whether id is one of the project's live agent tokens.
func (s *service) isAgentOf(ctx context.Context, projectID, id string) (bool, error) {
	if s.agents == nil {
		return false, nil
	}
	agents, err := s.agents.Agents(ctx, projectID)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(agents, func(a oauth.Client) bool { return a.ID == id }), nil
}
