package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"golang.org/x/oauth2"

	"github.com/authcore/authcore/ent"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/platform/identity"
)

// upstreamsFor is identity.Upstreams for the token vault (SPEC §23): the tokens a sign-in
// with offline access sealed on an identity (sealTokens), and the provider's endpoints.
type upstreamsFor struct{ s *service }

var _ identity.Upstreams = upstreamsFor{}

func (u upstreamsFor) Upstream(ctx context.Context, providerID string) (identity.UpstreamProvider, bool, error) {
	p, err := u.s.store.get(ctx, providerID)
	if errors.Is(err, errProviderNotFound) {
		return identity.UpstreamProvider{}, false, nil
	}
	if err != nil {
		return identity.UpstreamProvider{}, false, err
	}
	return identity.UpstreamProvider{ID: p.ID, TenantID: p.TenantID, Name: p.Name, Offline: p.Offline, Enabled: p.Enabled}, true, nil
}

// sealedTokens is what sealTokens keeps.
type sealedTokens struct {
	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken"`
	Expiry       time.Time `json:"expiry"`
}

func (u upstreamsFor) TakeTokens(ctx context.Context, tx *ent.Tx, userID, providerID string) (identity.UpstreamTokens, bool, error) {
	row, err := tx.Identity.Query().Where(entidentity.UserID(userID), entidentity.ProviderID(providerID)).Only(ctx)
	if ent.IsNotFound(err) {
		return identity.UpstreamTokens{}, false, nil
	}
	if err != nil || row.TokensSealed == "" {
		return identity.UpstreamTokens{}, false, err
	}
	plain, err := u.s.keys.Open(row.TokensSealed, []byte(row.ID))
	if err != nil {
		return identity.UpstreamTokens{}, false, err
	}
	var t sealedTokens
	if err := json.Unmarshal(plain, &t); err != nil {
		return identity.UpstreamTokens{}, false, err
	}
	if t.RefreshToken == "" { // nothing a vault can keep fresh
		return identity.UpstreamTokens{}, false, nil
	}
	// Moved, not copied: a refresh token two holders use is one the upstream may call
	// stolen when it rotates.
	if err := tx.Identity.UpdateOne(row).SetTokensSealed("").Exec(ctx); err != nil {
		return identity.UpstreamTokens{}, false, err
	}
	return identity.UpstreamTokens{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: "Bearer", Expiry: t.Expiry}, true, nil
}

// client is the provider's upstream client, built (and its discovery read) when needed.
func (u upstreamsFor) client(ctx context.Context, providerID string) (*upstream, error) {
	p, err := u.s.store.get(ctx, providerID)
	if err != nil {
		return nil, err
	}
	up, err := u.s.upstreamOf(ctx, p)
	if err != nil {
		return nil, errors.Join(identity.ErrUpstreamUnavailable, classify(err), err)
	}
	return up, nil
}

func (u upstreamsFor) Refresh(ctx context.Context, providerID, refreshToken string) (identity.UpstreamTokens, error) {
	up, err := u.client(ctx, providerID)
	if err != nil {
		return identity.UpstreamTokens{}, err
	}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, u.s.up.http), 2*callTimeout)
	defer cancel()
	// An expired token makes the source refresh at once.
	tok, err := up.oauth.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
			return identity.UpstreamTokens{}, errors.Join(identity.ErrUpstreamRefused, err)
		}
		return identity.UpstreamTokens{}, errors.Join(identity.ErrUpstreamUnavailable, classify(err), err)
	}
	scope, _ := tok.Extra("scope").(string)
	return identity.UpstreamTokens{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: tok.Type(), Scope: scope,
		ExpiresIn: time.Duration(tok.ExpiresIn) * time.Second}, nil
}

func (u upstreamsFor) Revoke(ctx context.Context, providerID, token, hint string) (bool, error) {
	up, err := u.client(ctx, providerID)
	if err != nil {
		return false, err
	}
	if up.revocation == "" {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, up.revocation, strings.NewReader(form.Encode()))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	// RFC 7009 §2.1: the client authenticates as at the token endpoint (client_secret_basic).
	req.SetBasicAuth(url.QueryEscape(up.oauth.ClientID), url.QueryEscape(up.oauth.ClientSecret))
	res, err := u.s.up.http.Do(req)
	if err != nil {
		return false, errors.Join(identity.ErrUpstreamUnavailable, classify(err), err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxAnswer))
	if res.StatusCode != http.StatusOK {
		return false, errors.Join(identity.ErrUpstreamUnavailable, failureOfStatus(res.StatusCode), fmt.Errorf("revocation answered %d", res.StatusCode))
	}
	return true, nil
}

// classify names why a call to a provider failed, for the vault's logs (issue 46: a 503
// that logged no cause): its class and any HTTP status, never the answer itself.
func classify(err error) *identity.UpstreamFailure {
	var (
		re *oauth2.RetrieveError
		ne net.Error
		ue *url.Error
		oe *net.OpError
	)
	switch {
	case errors.As(err, &re) && re.Response != nil:
		return failureOfStatus(re.Response.StatusCode)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &identity.UpstreamFailure{Class: identity.UpstreamTimeout}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &identity.UpstreamFailure{Class: identity.UpstreamConnRefused}
	case errors.As(err, &ue) || errors.As(err, &oe):
		return &identity.UpstreamFailure{Class: identity.UpstreamUnreachable}
	}
	// What is left came back over HTTP and could not be read as the protocol says (no
	// access_token, not JSON, a discovery document that does not match).
	return &identity.UpstreamFailure{Class: identity.UpstreamBadAnswer}
}

// failureOfStatus is an answer of status where another was due: a server error, or one
// the protocol has no place for.
func failureOfStatus(status int) *identity.UpstreamFailure {
	if status >= 500 {
		return &identity.UpstreamFailure{Class: identity.Upstream5xx, Status: status}
	}
	return &identity.UpstreamFailure{Class: identity.UpstreamBadAnswer, Status: status}
}
