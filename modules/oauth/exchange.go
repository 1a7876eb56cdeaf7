package oauth

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"strings"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/oauth"
)

// exchanges is the token-exchange grant (RFC 8693): one grant type, whose requests go to
// the contributed exchange that issues their requested_token_type.
type exchanges struct {
	byType map[string]oauth.Exchange
	types  []string
}

type exchangeParams struct {
	fx.In
	Exchanges []oauth.Exchange `group:"oauth_exchanges"`
}

// newExchanges is the grant when anything is contributed, else no grant at all (the
// metadata then lists no token exchange).
func newExchanges(p exchangeParams) (*exchanges, error) {
	e := &exchanges{byType: map[string]oauth.Exchange{}}
	for _, x := range p.Exchanges {
		if _, dup := e.byType[x.RequestedType()]; dup {
			return nil, errors.New("oauth: token exchange to " + x.RequestedType() + " is contributed twice")
		}
		e.byType[x.RequestedType()] = x
		e.types = append(e.types, x.RequestedType())
	}
	sort.Strings(e.types)
	return e, nil
}

var _ oauth.Grant = (*exchanges)(nil)

func (*exchanges) Type() string { return oauth.GrantTokenExchange }

// Metric is the label of a request whose exchange is unknown; MetricOf names each one's.
func (*exchanges) Metric() string { return "token_exchange" }

// MetricOf is the endpoint label of the exchange form asks for.
func (e *exchanges) MetricOf(form url.Values) string {
	if x, err := e.of(form.Get("requested_token_type")); err == nil {
		return x.Metric()
	}
	return e.Metric()
}

func (*exchanges) ClientAuth() bool { return false }

// ClientAuthOptional: a client that authenticates is passed on to the exchange, which
// says whether it needed one.
func (*exchanges) ClientAuthOptional() {}

func (*exchanges) Repeatable(name string) bool { return name == "resource" || name == "audience" }

// of is the exchange a request asks for.
func (e *exchanges) of(requested string) (oauth.Exchange, error) {
	if requested == "" {
		requested = oauth.TokenTypeAccess
	}
	x, ok := e.byType[requested]
	if !ok {
		return nil, oauth.InvalidRequest("requested_token_type must be one of " + strings.Join(e.types, ", "))
	}
	return x, nil
}

func (e *exchanges) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	if len(r.Form["requested_token_type"]) > 1 {
		return oauth.Token{}, oauth.InvalidRequest("parameter requested_token_type is repeated")
	}
	x, err := e.of(r.Form.Get("requested_token_type"))
	if err != nil {
		return oauth.Token{}, err
	}
	if x.ClientAuth() && r.Client == nil {
		return oauth.Token{}, oauth.ErrInvalidClient
	}
	return x.Token(ctx, r)
}

// Live asks every exchange: an access token was issued by one of them.
func (e *exchanges) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	for _, t := range e.types {
		if ok, err := e.byType[t].Live(ctx, from); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}
