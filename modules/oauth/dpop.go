package oauth

import (
	"context"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/oauth"
)

// proven checks the DPoP proof a token request carries, if any (RFC 9449 §5, SPEC §22),
// and returns ctx saying which key it proved: what oauth.Sign binds the tokens to. Every
// answer names the nonce to use next. A proof's jti is spent in this process's memory: its
// nonce is valid only here (platform/dpop), so it is single use on every replica.
func (s *server) proven(c *fiber.Ctx, ctx context.Context) (context.Context, error) {
	c.Set("DPoP-Nonce", s.dpop.Nonce())
	proofs := c.Request().Header.PeekAll("DPoP")
	switch len(proofs) {
	case 0:
		return ctx, nil
	case 1:
	default:
		return ctx, refusedProof(&dpop.Error{Why: "send one DPoP proof"})
	}
	p, err := s.dpop.Verify(string(proofs[0]), dpop.Request{Method: http.MethodPost, URL: s.cfg.SelfURL() + oauth.TokenPath})
	if err != nil {
		return ctx, refusedProof(err)
	}
	return oauth.WithDPoP(ctx, p.JKT), nil
}

// refusedProof is RFC 9449's answer to a refused proof: 400 invalid_dpop_proof, or
// use_dpop_nonce when a retry with the DPoP-Nonce sent will do.
func refusedProof(err error) error {
	var e *dpop.Error
	if !errors.As(err, &e) {
		return err
	}
	return oauth.Error(apperr.KindInvalid, e.Code(), e.Why)
}
