package main

import (
	"bytes"
	"net"
	"os"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

// The whole graph resolves: every constructor's dependencies are provided.
func TestValidateApp(t *testing.T) {
	cfg := apptest.Config("sqlite::memory:", t.TempDir())
	if err := fx.ValidateApp(app.Options(cfg, secret.MasterKey(apptest.TestMasterKey), logging.Output{Writer: &bytes.Buffer{}})); err != nil {
		t.Fatal(err)
	}
}

func TestHelpListsEverySetting(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	help := out.String()
	for _, want := range []string{
		"AUTHCORE_ADDR", ":8080",
		"AUTHCORE_DATABASE_URL", "sqlite:./data/authcore.db",
		"AUTHCORE_DATA_DIR", "./data",
		"AUTHCORE_MASTER_KEY",
		"AUTHCORE_SIGNUP", "AUTHCORE_RATE_LIMIT", "default 60",
		"AUTHCORE_ALLOWED_ORIGINS", "AUTHCORE_INSECURE_COOKIES",
		"AUTHCORE_ACCESS_TTL", "15m", "AUTHCORE_REFRESH_TTL", "720h",
		"AUTHCORE_LOG_LEVEL", "AUTHCORE_S3_ENDPOINT", "http://127.0.0.1:9000",
		"AUTHCORE_S3_REGION", "us-east-1", "AUTHCORE_METRICS_ADDR",
		"serve", "migrate", "version",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestBadSettingExitsWithOneLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unparsable address", nil, map[string]string{"AUTHCORE_ADDR": "bogus"}, "AUTHCORE_ADDR"},
		{"address flag overrides env", []string{"--addr=also-bogus"}, map[string]string{"AUTHCORE_ADDR": ":8080"}, "also-bogus"},
		{"unknown database scheme", nil, map[string]string{"AUTHCORE_DATABASE_URL": "mysql://x"}, "AUTHCORE_DATABASE_URL"},
		{"master key not base64", nil, map[string]string{"AUTHCORE_MASTER_KEY": "%%%"}, "AUTHCORE_MASTER_KEY"},
		{"master key too short", nil, map[string]string{"AUTHCORE_MASTER_KEY": "c2hvcnQ="}, "want 32 bytes"},
		{"postgres without master key", []string{"--database-url=postgres://u@127.0.0.1:1/x", "--data-dir=" + t.TempDir()}, nil, "required when the store is PostgreSQL"},
		{"unknown signup mode", nil, map[string]string{"AUTHCORE_SIGNUP": "maybe"}, "signup"},
		{"negative rate limit", []string{"--rate-limit=-1"}, nil, "AUTHCORE_RATE_LIMIT"},
		{"bad duration", nil, map[string]string{"AUTHCORE_ACCESS_TTL": "soon"}, "access-ttl"},
		{"bad origin", nil, map[string]string{"AUTHCORE_ALLOWED_ORIGINS": "not an origin"}, "AUTHCORE_ALLOWED_ORIGINS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errOut bytes.Buffer
			code := run(tc.args, &out, &errOut)
			if code == 0 {
				t.Fatalf("exit 0; stderr %q", errOut.String())
			}
			msg := strings.TrimRight(errOut.String(), "\n")
			if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, tc.want) || strings.Contains(msg, "goroutine") {
				t.Fatalf("want one line naming %q, got:\n%s", tc.want, msg)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version"}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "authcore ") {
		t.Fatalf("exit %d, out %q", code, out.String())
	}
}

func TestMigrateCommand(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var out, errOut bytes.Buffer
		args := []string{"migrate", "--database-url=" + st.URL(t), "--data-dir=" + t.TempDir()}
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if !strings.Contains(out.String(), "store migrated") {
			t.Fatalf("out %q", out.String())
		}
	})
}

func TestMain(m *testing.M) { apptest.Main(m) }

// An operator command beside a running server binds none of the server's ports: with
// both the HTTP and the metrics address already taken, users create still succeeds.
func TestOperatorCommandsOpenNoPort(t *testing.T) {
	var taken []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		taken = append(taken, ln.Addr().String())
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"users", "create", "--email=ops@example.com", "--password=correct horse battery",
		"--addr=" + taken[0], "--metrics-addr=" + taken[1], "--database-url=sqlite:" + dir + "/a.db", "--data-dir=" + dir}
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "created user") {
		t.Fatalf("out %q", out.String())
	}
}

// Without --password, users create reads the password from standard input, so it never
// has to be in argv (visible in ps and shell history).
func TestUsersCreateReadsThePasswordFromStdin(t *testing.T) {
	dir := t.TempDir()
	stdin = strings.NewReader("correct horse battery\n")
	defer func() { stdin = os.Stdin }()
	var out, errOut bytes.Buffer
	args := []string{"users", "create", "--email=piped@example.com", "--database-url=sqlite:" + dir + "/a.db", "--data-dir=" + dir}
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "created user") {
		t.Fatalf("out %q", out.String())
	}
	// The password read is the one validated: a short one is refused as on the flag.
	stdin = strings.NewReader("short\n")
	out.Reset()
	errOut.Reset()
	args[2] = "--email=short@example.com"
	if code := run(args, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "password") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}
