package oauth

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/oauth"
)

// proven checks the DPoP proof a token request carries, if any (RFC 9449 §5, SPEC §22),
// and returns ctx saying which key it proved: what oauth.Sign binds the tokens to. Every
// answer names the nonce to use next. A proof's jti is spent in this process's memory: its
// nonce is valid only here (platform/dpop), so it is single use on every replica.
func (s *server) proven(c *fiber.Ctx, ctx context.Context) (context.Context, error) {
	c.Set("DPoP-Nonce", s.dpop.Nonce())
	return oauth.ProveDPoP(ctx, s.dpop, c.Request().Header.PeekAll("DPoP"), http.MethodPost, s.cfg.SelfURL()+oauth.TokenPath)
}
