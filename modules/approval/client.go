package approval

import (
	"context"
	"errors"
	"mime"
	"net/url"
	"slices"
	"strings"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/oauth"
)

const formType = "application/x-www-form-urlencoded"

// readForm reads an application/x-www-form-urlencoded body (CIBA §7.1 and the token
// endpoint both take one).
func readForm(contentType string, body []byte) (url.Values, error) {
	if mt, _, _ := mime.ParseMediaType(contentType); mt != formType {
		return nil, oauth.InvalidRequest("the body must be application/x-www-form-urlencoded")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, oauth.InvalidRequest("the body is not valid form encoding")
	}
	return form, nil
}

// repeated refuses a parameter given twice, but those in allowed.
func repeated(form url.Values, allowed ...string) error {
	for k, v := range form {
		if len(v) > 1 && !slices.Contains(allowed, k) {
			return oauth.InvalidRequest("parameter " + k + " is repeated")
		}
	}
	return nil
}

// agentIDPrefix begins every agent token's id: a client_id with it is an agent token
// acting as a client of its project.
var agentIDPrefix = schema.AgentTokenIDPrefix

// client authenticates the caller of the backchannel endpoint and its grant (SPEC §23):
// a confidential client as the token endpoint authenticates one (an auth badge's client;
// client_secret_basic, client_secret_post or private_key_jwt), or an agent token acting
// as a client of its project — its id as client_id and the token itself as client_secret
// (basic or post). ctx carries the issuer.
func (s *service) client(ctx context.Context, form url.Values, authorization, endpoint string) (oauth.Client, error) {
	creds, err := oauth.ClientCredentials(authorization, form)
	if err != nil {
		return oauth.Client{}, err
	}
	if strings.HasPrefix(creds.ID, agentIDPrefix) {
		if s.agents == nil || creds.Secret == "" { // a token is a secret: never asserted
			return oauth.Client{}, oauth.ErrInvalidClient
		}
		cl, err := s.agents.Agent(ctx, creds.Secret)
		if errors.Is(err, credential.ErrNotLive) || (err == nil && cl.ID != creds.ID) {
			return oauth.Client{}, oauth.ErrInvalidClient
		}
		if err != nil {
			return oauth.Client{}, err
		}
		cl.Method = creds.Method
		return cl, nil
	}
	cl, err := s.auth.AuthenticateClient(ctx, creds, endpoint)
	if err != nil {
		return oauth.Client{}, err
	}
	if cl.ProjectID == "" { // a host's registered client acts for no project's people
		return oauth.Client{}, errNoProject
	}
	return cl, nil
}
