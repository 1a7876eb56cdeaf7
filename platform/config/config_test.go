package config

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func valid() Config {
	return Config{
		Addr: ":8080", DatabaseURL: "sqlite:./data/authcore.db", DataDir: "./data", Signup: "open",
		RateLimit: 60, AccessTTL: 15 * time.Minute, RefreshTTL: 720 * time.Hour, ReadMaxLag: time.Second, LogLevel: "info",
		MetricsAddr: "127.0.0.1:9090",
	}
}

func TestValidate(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	cases := []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"host and port", func(c *Config) { c.Addr = "127.0.0.1:0" }, ""},
		{"no port", func(c *Config) { c.Addr = "bogus" }, "AUTHCORE_ADDR"},
		{"bad port", func(c *Config) { c.Addr = ":99999" }, "AUTHCORE_ADDR"},
		{"bad metrics addr", func(c *Config) { c.MetricsAddr = "x" }, "AUTHCORE_METRICS_ADDR"},
		{"metrics on the public port, said so", func(c *Config) { c.MetricsAddr = "public" }, ""},
		{"metrics on all interfaces", func(c *Config) { c.MetricsAddr = ":9090" }, ""},
		{"metrics addr empty", func(c *Config) { c.MetricsAddr = "" }, "AUTHCORE_METRICS_ADDR"},
		{"metrics addr the main one", func(c *Config) { c.MetricsAddr = ":8080" }, "AUTHCORE_METRICS_ADDR"},
		{"postgres", func(c *Config) { c.DatabaseURL = "postgres://u:p@h:5432/d" }, ""},
		{"postgresql", func(c *Config) { c.DatabaseURL = "postgresql://u@h/d" }, ""},
		{"sqlite memory", func(c *Config) { c.DatabaseURL = "sqlite::memory:" }, ""},
		{"sqlite without path", func(c *Config) { c.DatabaseURL = "sqlite:" }, "AUTHCORE_DATABASE_URL"},
		{"unknown scheme", func(c *Config) { c.DatabaseURL = "mysql://u:hunter2@h/d" }, "AUTHCORE_DATABASE_URL"},
		{"read replica", func(c *Config) {
			c.DatabaseURL, c.DatabaseReadURL = "postgres://u@h/d", "postgres://u@replica/d"
		}, ""},
		{"read replica of sqlite", func(c *Config) { c.DatabaseReadURL = "postgres://u@replica/d" }, "AUTHCORE_DATABASE_READ_URL"},
		{"read replica not postgres", func(c *Config) {
			c.DatabaseURL, c.DatabaseReadURL = "postgres://u@h/d", "sqlite:./r.db"
		}, "AUTHCORE_DATABASE_READ_URL"},
		{"zero read lag", func(c *Config) { c.ReadMaxLag = 0 }, "AUTHCORE_READ_MAX_LAG"},
		{"good key", func(c *Config) { c.MasterKey = key }, ""},
		{"short key", func(c *Config) { c.MasterKey = "AAAA" }, "AUTHCORE_MASTER_KEY"},
		{"zero access ttl", func(c *Config) { c.AccessTTL = 0 }, "AUTHCORE_ACCESS_TTL"},
		{"negative refresh ttl", func(c *Config) { c.RefreshTTL = -time.Second }, "AUTHCORE_REFRESH_TTL"},
		{"origin", func(c *Config) { c.AllowedOrigins = []string{"https://a.example"} }, ""},
		{"not an origin", func(c *Config) { c.AllowedOrigins = []string{"a.example"} }, "AUTHCORE_ALLOWED_ORIGINS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.edit(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Fatal("a database password reached an error message")
			}
		})
	}
}

func TestResolveMasterKeyKeepsTheDevKey(t *testing.T) {
	c := valid()
	c.DataDir = filepath.Join(t.TempDir(), "data")
	calls := 0
	gen := func() ([]byte, error) { calls++; return bytes.Repeat([]byte{9}, 32), nil }
	k1, dev, err := c.ResolveMasterKey(gen)
	if err != nil || !dev || len(k1) != 1 || len(k1[0]) != 32 {
		t.Fatalf("first: %v %v %d", err, dev, len(k1))
	}
	st, err := os.Stat(c.MasterKeyFile())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", err, st)
	}
	k2, _, err := c.ResolveMasterKey(gen)
	if err != nil || len(k2) != 1 || !bytes.Equal(k1[0], k2[0]) || calls != 1 {
		t.Fatalf("second resolve generated again or differs: calls=%d err=%v", calls, err)
	}
}

func TestResolveMasterKeyRequiredOnPostgres(t *testing.T) {
	c := valid()
	c.DatabaseURL = "postgres://u@h/d"
	if _, _, err := c.ResolveMasterKey(func() ([]byte, error) { return make([]byte, 32), nil }); err == nil {
		t.Fatal("generated a key for PostgreSQL")
	}
}

// AUTHCORE_MASTER_KEY may list several keys, comma-separated: the first seals, all open.
func TestSeveralMasterKeys(t *testing.T) {
	a, b := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	c := valid()
	c.MasterKey = b + "," + a
	ks, dev, err := c.ResolveMasterKey(nil)
	if err != nil || dev || len(ks) != 2 || ks[0][0] != 2 || ks[1][0] != 1 {
		t.Fatalf("%v %v %v", ks, dev, err)
	}
	c.MasterKey = b + ",not-base64"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "AUTHCORE_MASTER_KEY") {
		t.Fatalf("err = %v", err)
	}
}

// SPEC §9b: with no setting, /metrics is on a loopback listener of its own, never the
// public port.
func TestMetricsStayOffThePublicPortByDefault(t *testing.T) {
	t.Setenv("AUTHCORE_METRICS_ADDR", "")
	os.Unsetenv("AUTHCORE_METRICS_ADDR")
	var c Config
	if err := Defaults(&c); err != nil {
		t.Fatal(err)
	}
	if c.MetricsAddr != "127.0.0.1:9090" || c.MetricsOnPublicPort() {
		t.Fatalf("default AUTHCORE_METRICS_ADDR %q", c.MetricsAddr)
	}
	t.Setenv("AUTHCORE_METRICS_ADDR", "public")
	if err := Defaults(&c); err != nil || !c.MetricsOnPublicPort() {
		t.Fatalf("AUTHCORE_METRICS_ADDR=public: %q, %v", c.MetricsAddr, err)
	}
}
