// Package app is the composition root: the one list of every platform provider, module
// and product plugin in the binary. Adding a feature or a product is one line here.
// cmd/authcore runs it; tests boot the very same graph.
package app

import (
	"reflect"

	"go.uber.org/fx"

	"github.com/authcore/authcore/api"
	"github.com/authcore/authcore/modules/account"
	"github.com/authcore/authcore/modules/agenttoken"
	"github.com/authcore/authcore/modules/approval"
	"github.com/authcore/authcore/modules/auditstream"
	"github.com/authcore/authcore/modules/authorize"
	"github.com/authcore/authcore/modules/badge"
	"github.com/authcore/authcore/modules/console"
	"github.com/authcore/authcore/modules/federation"
	"github.com/authcore/authcore/modules/logout"
	"github.com/authcore/authcore/modules/mfa"
	"github.com/authcore/authcore/modules/oauth"
	"github.com/authcore/authcore/modules/org"
	"github.com/authcore/authcore/modules/project"
	"github.com/authcore/authcore/modules/resource"
	"github.com/authcore/authcore/modules/scim"
	"github.com/authcore/authcore/modules/secretscan"
	"github.com/authcore/authcore/modules/session"
	"github.com/authcore/authcore/modules/trust"
	"github.com/authcore/authcore/modules/usage"
	"github.com/authcore/authcore/modules/vault"
	"github.com/authcore/authcore/modules/webhook"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/audit/chainer"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/health"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/tracing"
)

// Listeners are what only a serving process runs: the HTTP server, the metrics listener
// when AUTHCORE_METRICS_ADDR is set, and the Workers. Only serve (and the load command)
// add them; operator commands build the same graph without them.
func Listeners() fx.Option { return fx.Options(httpserver.Listen, metrics.Listen, Workers()) }

// Workers are the background loops of a serving process: the audit chainer, and the
// webhook and audit stream delivery workers. Tests run them without the listeners.
func Workers() fx.Option {
	return fx.Options(chainer.Run, webhook.Deliver, auditstream.Deliver, logout.Deliver)
}

// Options is the whole application for cfg, with the master key already resolved and
// logs going to out.
func Options(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return With(cfg, keys, out, Products()...)
}

// With is the application with products instead of Products (tests of the extension
// contract add one, or leave one out). Each product's settings are the parsed ones in
// cfg.Plugins, else its defaults.
func With(cfg config.Config, keys secret.MasterKeys, out logging.Output, products ...product.Plugin) fx.Option {
	plugins := make([]fx.Option, 0, 2*len(products))
	for _, p := range products {
		plugins = append(plugins, p.Module)
		if p.Settings != nil {
			s, err := settingsOf(cfg, p)
			if err != nil {
				return fx.Error(err)
			}
			plugins = append(plugins, fx.Supply(s))
		}
	}
	return fx.Options(
		fx.Supply(cfg, keys, out),

		// The platform every module stands on.
		logging.Module, logging.FxLogger, tracing.Module, clock.Module, secret.Module, metrics.Module,
		database.Module, audit.Module, chainer.Module, httpserver.Module, health.Module, invalidation.Module,
		ratelimit.Module, guard.Module, bearer.Module, product.Module, mail.Module, credential.Module, dpop.Module,

		api.Module,

		// Features: one line each.
		account.Module,
		session.Module,
		project.Module,
		agenttoken.Module,
		badge.Module,
		secretscan.Module,
		webhook.Module,
		console.Module,
		resource.Module,
		oauth.Module,
		authorize.Module,
		usage.Module,
		mfa.Module,
		trust.Module,
		federation.Module,
		approval.Module,
		vault.Module,
		auditstream.Module,
		logout.Module,
		org.Module,
		scim.Module,

		fx.Options(plugins...),
	)
}

// settingsOf is p's settings: the parsed value in cfg.Plugins of its type, or its defaults.
func settingsOf(cfg config.Config, p product.Plugin) (any, error) {
	s := p.Settings()
	for _, parsed := range cfg.Plugins {
		if reflect.TypeOf(parsed) == reflect.TypeOf(s) {
			return parsed, nil
		}
	}
	return s, config.Defaults(s)
}
