// Package config holds the settings of SPEC §8. Parsing of the environment and flags is
// done by kong in cmd/authcore (a plugin's own settings live in its package and are parsed
// with these); this package declares the service's settings and checks them,
// so that a bad value stops the process with one clear line before anything starts.
package config

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/alecthomas/kong"
)

// Config is every setting of the service. The kong tags make each one an environment
// variable and a kebab-case flag; ${default} keeps the help text and the default in step.
type Config struct {
	Addr                 string        `name:"addr" env:"AUTHCORE_ADDR" default:":8080" help:"Listen address (default ${default})."`
	DatabaseURL          string        `name:"database-url" env:"AUTHCORE_DATABASE_URL" default:"sqlite:./data/authcore.db" help:"postgres://…, postgresql://… or sqlite:PATH (sqlite::memory: for a throw-away store) (default ${default})."`
	DatabaseReadURL      string        `name:"database-read-url" env:"AUTHCORE_DATABASE_READ_URL" help:"postgres://… of a streaming read replica of AUTHCORE_DATABASE_URL: verification lookups that miss the caches read it when that cannot accept a revoked credential (SPEC §18) (default: empty, none)."`
	ReadMaxLag           time.Duration `name:"read-max-lag" env:"AUTHCORE_READ_MAX_LAG" default:"1s" help:"Replica lag beyond which verification lookups go to the primary (default ${default})."`
	Modules              []string      `name:"modules" env:"AUTHCORE_MODULES" help:"Comma list of the modules this process serves routes of (account, session, agenttoken, badge, …); platform routes are always served (default: all)."`
	SQLiteSync           string        `name:"sqlite-sync" env:"AUTHCORE_SQLITE_SYNC" default:"full" enum:"full,extra,normal,off" help:"SQLite's synchronous setting: full (or extra) makes every acknowledged write survive power loss, its flush shared by concurrent writers (group commit); normal survives a crash of the process but not of the machine, off neither — development only, with a warning at start (default ${default})."`
	CacheSize            int           `name:"cache-size" env:"AUTHCORE_CACHE_SIZE" default:"100000" help:"Verified credentials each cache holds (agent tokens, badges, sessions …), about 0.7 KiB each: size it to the credentials of one kind verified within 5 minutes; 0 is the default (default ${default})."`
	DataDir              string        `name:"data-dir" env:"AUTHCORE_DATA_DIR" default:"./data" help:"Where the SQLite file and a generated dev master key live (default ${default})."`
	MasterKey            string        `name:"master-key" env:"AUTHCORE_MASTER_KEY" help:"Base64 of 32 bytes, or several comma-separated: the first seals, all open (key rotation: see authcore keys reseal); required with PostgreSQL, generated into the data dir otherwise (default: generated in dev)."`
	Signup               string        `name:"signup" env:"AUTHCORE_SIGNUP" default:"open" enum:"open,closed" help:"open or closed (default ${default})."`
	RateLimit            int           `name:"rate-limit" env:"AUTHCORE_RATE_LIMIT" default:"60" help:"Sign-in/sign-up attempts and failed credential verifications per minute per client IP; 0 turns it off (default ${default})."`
	AllowedOrigins       []string      `name:"allowed-origins" env:"AUTHCORE_ALLOWED_ORIGINS" help:"Comma list of origins allowed to make cookie-authenticated changes (default: empty)."`
	InsecureCookies      bool          `name:"insecure-cookies" env:"AUTHCORE_INSECURE_COOKIES" default:"false" help:"Drop the Secure cookie flag, for plain-HTTP local development only (default ${default})."`
	AccessTTL            time.Duration `name:"access-ttl" env:"AUTHCORE_ACCESS_TTL" default:"15m" help:"Access token lifetime (default ${default})."`
	RefreshTTL           time.Duration `name:"refresh-ttl" env:"AUTHCORE_REFRESH_TTL" default:"720h" help:"Refresh token lifetime, sliding (default ${default})."`
	LogLevel             string        `name:"log-level" env:"AUTHCORE_LOG_LEVEL" default:"info" enum:"debug,info,warn,error" help:"debug, info, warn or error (default ${default})."`
	OutboundCAFile       string        `name:"outbound-ca-file" env:"AUTHCORE_OUTBOUND_CA_FILE" help:"PEM certificate authorities trusted, beside the system's, for webhook deliveries and client metadata documents (an internal CA)."`
	OAuthRegistration    string        `name:"oauth-registration" env:"AUTHCORE_OAUTH_REGISTRATION" enum:"open,closed" default:"open" help:"Whether hosts may register OAuth clients for themselves (RFC 7591, SPEC §16): open or closed."`
	PublicURL            string        `name:"public-url" env:"AUTHCORE_PUBLIC_URL" help:"The URL clients reach this server at (https://auth.example.com): the issuer, its own origin for the CSRF rule and the base of every URL it hands out or mails; never taken from a request (default: http://localhost:<listen port>, with a warning)."`
	TrustedProxies       []string      `name:"trusted-proxies" env:"AUTHCORE_TRUSTED_PROXIES" help:"Comma list of CIDRs (or addresses) of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed; from any other peer they are ignored (default: empty, none)."`
	SMTPURL              string        `name:"smtp-url" env:"AUTHCORE_SMTP_URL" help:"smtp://user:pass@host:port (STARTTLS when offered), smtps://… (implicit TLS), or smtp://host:port?insecure=true (a local test server); unset, the mail routes answer 503 mail_not_configured (default: empty)."`
	MailFrom             string        `name:"mail-from" env:"AUTHCORE_MAIL_FROM" default:"authcore@localhost" help:"Sender of the mails authcore sends (default ${default})."`
	RequireVerifiedEmail bool          `name:"require-verified-email" env:"AUTHCORE_REQUIRE_VERIFIED_EMAIL" default:"false" help:"Refuse dashboard requests (403 email_not_verified) until the user verified their address (default ${default})."`
	SecretScanningKeys   string        `name:"secret-scanning-keys" env:"AUTHCORE_SECRET_SCANNING_KEYS" help:"Path to a JSON file of GitHub's secret-scanning public keys ({public_keys: [{key_identifier, key, is_current}]}); unset, POST /v1/secret-scanning/report answers 404 (default: empty)."`
	WebhookAllowHTTP     bool          `name:"webhook-allow-http" env:"AUTHCORE_WEBHOOK_ALLOW_HTTP" default:"false" help:"Development only: let webhooks use plain http and loopback or private addresses; link-local and metadata addresses stay refused (default ${default})."`
	ProvidersFile        string        `name:"providers-file" env:"AUTHCORE_PROVIDERS_FILE" help:"YAML or JSON file of the dashboard tenant's sign-in providers and methods (SPEC §20), read at start; entries there are changed only there (default: empty, none)."`
	BackchannelInterval  time.Duration `name:"backchannel-interval" env:"AUTHCORE_BACKCHANNEL_INTERVAL" default:"5s" help:"The least time between an agent's polls for a person's approval (OpenID CIBA, SPEC §23), whole seconds from 1s to 60s; polling sooner answers slow_down (default ${default})."`
	DNSResolver          string        `name:"dns-resolver" env:"AUTHCORE_DNS_RESOLVER" help:"host:port of the DNS server asked for the TXT records that prove an org's domain (SPEC §26); unset, the system resolver (default: empty)."`
	MetricsAddr          string        `name:"metrics-addr" env:"AUTHCORE_METRICS_ADDR" default:"127.0.0.1:9090" help:"Where /metrics is served: host:port of a listener of its own, loopback by default so metrics stay off the public port (default ${default}), or public to serve it on AUTHCORE_ADDR beside the API."`

	// Plugins are product plugins' own settings, parsed with these (pointers to each
	// plugin's settings struct); a plugin's missing here gets its defaults (Defaults).
	Plugins []any `kong:"-"`
}

// Defaults fills settings, a pointer to a struct with kong tags like Config's, from the
// environment and the tags' defaults, and checks it when it has a Validate method.
func Defaults(settings any) error {
	p, err := kong.New(settings, kong.Exit(func(int) {}))
	if err != nil {
		return err
	}
	if _, err := p.Parse(nil); err != nil {
		return err
	}
	return Check(settings)
}

// Check runs settings' Validate method, when it has one.
func Check(settings any) error {
	if v, ok := settings.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// Storage names the kind of store a database URL selects.
type Storage string

const (
	Postgres Storage = "postgres"
	SQLite   Storage = "sqlite"
)

// StorageOf tells which store a database URL selects.
func StorageOf(databaseURL string) (Storage, error) {
	switch {
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		if _, err := url.Parse(databaseURL); err != nil {
			return "", fmt.Errorf("AUTHCORE_DATABASE_URL: %v", err)
		}
		return Postgres, nil
	case strings.HasPrefix(databaseURL, "sqlite:"):
		if strings.TrimPrefix(databaseURL, "sqlite:") == "" {
			return "", fmt.Errorf("AUTHCORE_DATABASE_URL: sqlite: needs a path (or :memory:)")
		}
		return SQLite, nil
	default:
		return "", fmt.Errorf("AUTHCORE_DATABASE_URL: unknown scheme in %q (want postgres://, postgresql:// or sqlite:PATH)", redactURL(databaseURL))
	}
}

// MetricsPublic is the AUTHCORE_METRICS_ADDR that serves /metrics on the main listener,
// beside the API. Anything else names a listener of its own: serving metrics to the
// public takes this explicit word (SPEC §9b).
const MetricsPublic = "public"

// MetricsOnPublicPort reports whether /metrics is served on AUTHCORE_ADDR.
func (c *Config) MetricsOnPublicPort() bool { return c.MetricsAddr == MetricsPublic }

// Validate checks every setting that kong cannot check by type alone. Each error names the
// setting, so the process can exit with that one line.
func (c *Config) Validate() error {
	if err := checkAddr("AUTHCORE_ADDR", c.Addr); err != nil {
		return err
	}
	switch c.MetricsAddr {
	case MetricsPublic:
	case "":
		return fmt.Errorf("AUTHCORE_METRICS_ADDR: empty; give host:port for a listener of its own (default 127.0.0.1:9090), or %s to serve /metrics on AUTHCORE_ADDR", MetricsPublic)
	case c.Addr:
		return fmt.Errorf("AUTHCORE_METRICS_ADDR: %q is AUTHCORE_ADDR; say %s to serve /metrics there", c.MetricsAddr, MetricsPublic)
	default:
		if err := checkAddr("AUTHCORE_METRICS_ADDR", c.MetricsAddr); err != nil {
			return err
		}
	}
	if _, err := StorageOf(c.DatabaseURL); err != nil {
		return err
	}
	if c.DNSResolver != "" {
		if err := checkAddr("AUTHCORE_DNS_RESOLVER", c.DNSResolver); err != nil {
			return err
		}
	}
	if c.DatabaseReadURL != "" {
		if st, _ := StorageOf(c.DatabaseURL); st != Postgres {
			return fmt.Errorf("AUTHCORE_DATABASE_READ_URL: a read replica needs a PostgreSQL AUTHCORE_DATABASE_URL")
		}
		if st, err := StorageOf(c.DatabaseReadURL); err != nil || st != Postgres {
			return fmt.Errorf("AUTHCORE_DATABASE_READ_URL: %q is not a postgres:// URL", redactURL(c.DatabaseReadURL))
		}
	}
	if c.ReadMaxLag <= 0 {
		return fmt.Errorf("AUTHCORE_READ_MAX_LAG: must be positive, got %s", c.ReadMaxLag)
	}
	if c.MasterKey != "" {
		if _, err := DecodeMasterKeys(c.MasterKey); err != nil {
			return err
		}
	}
	if c.CacheSize < 0 {
		return fmt.Errorf("AUTHCORE_CACHE_SIZE: must be 0 (the default) or more, got %d", c.CacheSize)
	}
	if c.RateLimit < 0 {
		return fmt.Errorf("AUTHCORE_RATE_LIMIT: must be 0 or more, got %d", c.RateLimit)
	}
	if d := c.BackchannelInterval; d != 0 && (d < time.Second || d > time.Minute || d%time.Second != 0) {
		return fmt.Errorf("AUTHCORE_BACKCHANNEL_INTERVAL: whole seconds from 1s to 60s, got %s", d)
	}
	if c.AccessTTL <= 0 {
		return fmt.Errorf("AUTHCORE_ACCESS_TTL: must be positive, got %s", c.AccessTTL)
	}
	if c.RefreshTTL <= 0 {
		return fmt.Errorf("AUTHCORE_REFRESH_TTL: must be positive, got %s", c.RefreshTTL)
	}
	for _, o := range c.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("AUTHCORE_ALLOWED_ORIGINS: %q is not an origin like https://app.example.com", o)
		}
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("AUTHCORE_PUBLIC_URL: %q is not an absolute http(s) URL like https://auth.example.com", c.PublicURL)
		}
	}
	if _, err := ParseTrustedProxies(c.TrustedProxies); err != nil {
		return err
	}
	if c.SMTPURL != "" {
		u, err := url.Parse(c.SMTPURL)
		if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
			return fmt.Errorf("AUTHCORE_SMTP_URL: %q is not smtp://host:port or smtps://host:port", redactURL(c.SMTPURL))
		}
	}
	if _, err := mail.ParseAddress(c.MailFrom); c.MailFrom != "" && err != nil {
		return fmt.Errorf("AUTHCORE_MAIL_FROM: %q is not an address", c.MailFrom)
	}
	for _, p := range c.Plugins {
		if err := Check(p); err != nil {
			return err
		}
	}
	return nil
}

func checkAddr(name, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port (%v)", name, addr, err)
	}
	if host != "" && net.ParseIP(host) == nil && !validHostname(host) {
		return fmt.Errorf("%s: %q has an invalid host", name, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%s: %q has an invalid port", name, addr)
	}
	return nil
}

func validHostname(h string) bool {
	for _, r := range h {
		if !(r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return h != ""
}

// DecodeMasterKey parses AUTHCORE_MASTER_KEY: standard base64 of exactly 32 bytes.
func DecodeMasterKey(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("AUTHCORE_MASTER_KEY: not base64: %v", err)
	}
	if len(k) != 32 {
		return nil, fmt.Errorf("AUTHCORE_MASTER_KEY: want 32 bytes, got %d", len(k))
	}
	return k, nil
}

// DecodeMasterKeys parses AUTHCORE_MASTER_KEY: one key, or several separated by commas
// (the first seals, all open).
func DecodeMasterKeys(s string) ([][]byte, error) {
	var keys [][]byte
	for _, part := range strings.Split(s, ",") {
		k, err := DecodeMasterKey(part)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// MasterKeyFile is where a development master key is kept when none is configured.
func (c *Config) MasterKeyFile() string { return filepath.Join(c.DataDir, "master.key") }

// ResolveMasterKey returns the configured master key, or, on the embedded store only, the
// one kept in the data directory, generating it on first use. It reports whether it
// generated or loaded a development key, so the caller can warn loudly.
// PostgreSQL means a shared, long-lived deployment, where a key that silently lives on one
// replica's disk would make the others unable to open sealed secrets: there it is required.
func (c *Config) ResolveMasterKey(generate func() ([]byte, error)) (keys [][]byte, devKey bool, err error) {
	if c.MasterKey != "" {
		ks, err := DecodeMasterKeys(c.MasterKey)
		return ks, false, err
	}
	st, err := StorageOf(c.DatabaseURL)
	if err != nil {
		return nil, false, err
	}
	if st == Postgres {
		return nil, false, fmt.Errorf("AUTHCORE_MASTER_KEY: required when the store is PostgreSQL (base64 of 32 random bytes, e.g. `openssl rand -base64 32`)")
	}
	path := c.MasterKeyFile()
	if b, err := os.ReadFile(path); err == nil {
		k, err := DecodeMasterKey(string(b))
		if err != nil {
			return nil, false, fmt.Errorf("%s: %v", path, err)
		}
		return [][]byte{k}, true, nil
	} else if !os.IsNotExist(err) {
		return nil, false, fmt.Errorf("AUTHCORE_DATA_DIR: reading %s: %v", path, err)
	}
	k, err := generate()
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, false, fmt.Errorf("AUTHCORE_DATA_DIR: %v", err)
	}
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		return nil, false, fmt.Errorf("AUTHCORE_DATA_DIR: writing %s: %v", path, err)
	}
	return [][]byte{k}, true, nil
}

// redactURL drops a password from a URL before it reaches an error message.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable>"
	}
	return u.Redacted()
}

// SelfURL is the server's own URL, the one place every URL it hands out, signs or mails
// is built from (SPEC §9a): AUTHCORE_PUBLIC_URL without a trailing slash, else
// http://localhost:<listen port>. It never depends on a request: a Host or
// X-Forwarded-Host header that shaped it would let anyone point reset mails, OAuth
// metadata and issuers at a host of their choosing.
func (c *Config) SelfURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	_, port, err := net.SplitHostPort(c.Addr)
	if err != nil || port == "" {
		port = "8080"
	}
	return "http://localhost:" + port
}

// SelfOrigin is the origin (scheme://host[:port]) of SelfURL.
func (c *Config) SelfOrigin() string {
	u, err := url.Parse(c.SelfURL())
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// OwnOrigins are the origins the server counts as its own for the CSRF rules: SelfOrigin,
// and, while no public URL is set (local development), the same port on the loopback
// addresses too, so a console opened at http://127.0.0.1:8080 works as well as one at
// localhost. None of them is taken from a request.
func (c *Config) OwnOrigins() []string {
	own := []string{c.SelfOrigin()}
	if c.PublicURL == "" {
		port := strings.TrimPrefix(own[0], "http://localhost:")
		own = append(own, "http://127.0.0.1:"+port, "http://[::1]:"+port)
	}
	return own
}

// ParseTrustedProxies reads AUTHCORE_TRUSTED_PROXIES: CIDRs, or bare addresses meaning
// one host.
func ParseTrustedProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("AUTHCORE_TRUSTED_PROXIES: %q is neither a CIDR nor an address", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
