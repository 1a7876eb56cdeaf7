package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

// The whole graph resolves: every constructor's dependencies are provided.
func TestValidateApp(t *testing.T) {
	cfg := apptest.Config("sqlite::memory:", t.TempDir())
	if err := fx.ValidateApp(app.Options(cfg, secret.MasterKeys{apptest.TestMasterKey}, logging.Output{Writer: &bytes.Buffer{}})); err != nil {
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
		"AUTHCORE_DATABASE_READ_URL", "AUTHCORE_READ_MAX_LAG", "AUTHCORE_MODULES",
		"AUTHCORE_SQLITE_SYNC", `--sqlite-sync="full"`, "AUTHCORE_CACHE_SIZE", "--cache-size=100000",
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
		{"a product's own setting", nil, map[string]string{"AUTHCORE_S3_ENDPOINT": "minio"}, "AUTHCORE_S3_ENDPOINT"},
		{"a product's own flag", []string{"--s3-endpoint=minio:9000"}, nil, "AUTHCORE_S3_ENDPOINT"},
		{"negative rate limit", []string{"--rate-limit=-1"}, nil, "AUTHCORE_RATE_LIMIT"},
		{"negative cache size", nil, map[string]string{"AUTHCORE_CACHE_SIZE": "-1"}, "AUTHCORE_CACHE_SIZE"},
		{"unknown SQLite sync", nil, map[string]string{"AUTHCORE_SQLITE_SYNC": "sometimes"}, "sqlite-sync"},
		{"bad duration", nil, map[string]string{"AUTHCORE_ACCESS_TTL": "soon"}, "access-ttl"},
		{"bad origin", nil, map[string]string{"AUTHCORE_ALLOWED_ORIGINS": "not an origin"}, "AUTHCORE_ALLOWED_ORIGINS"},
		{"read replica of the embedded store", nil, map[string]string{"AUTHCORE_DATABASE_READ_URL": "postgres://u@127.0.0.1:1/x"}, "AUTHCORE_DATABASE_READ_URL"},
		{"zero replica lag", []string{"--read-max-lag=0s"}, nil, "AUTHCORE_READ_MAX_LAG"},
		{"unknown module", []string{"--database-url=sqlite::memory:", "--data-dir=" + t.TempDir(), "--addr=127.0.0.1:0"},
			map[string]string{"AUTHCORE_MODULES": "session,acount"}, `AUTHCORE_MODULES: no module is named "acount"`},
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

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "serve" { // a server for the power-loss test, configured by its environment
		os.Exit(run([]string{"serve"}, os.Stdout, os.Stderr))
	}
	apptest.Main(m)
}

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

func me(a *apptest.App, header map[string]string) *apptest.Response {
	return a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: header})
}

// verifyS3 signs a request with the minted s3 credentials, as an S3 client would, and
// checks that s3/verify accepts it: the secret key opened with the server's keys.
func verifyS3(t *testing.T, a *apptest.App, s3 map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s3["endpoint"].(string)+"/"+s3["bucket"].(string)+"/k", nil)
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: s3["accessKeyId"].(string), SecretAccessKey: s3["secretAccessKey"].(string)}
	if err := signer.SignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", s3["region"].(string), a.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	h := map[string]any{"host": req.Host}
	for k, v := range req.Header {
		h[strings.ToLower(k)] = v[0]
	}
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/service-badges/s3/verify",
		Body: map[string]any{"method": "GET", "path": req.URL.EscapedPath(), "headers": h}}).Expect(t, 200, map[string]any{"valid": true})
}

// Master-key rotation without downtime: values sealed under key A; every replica then
// runs with "B,A" (B seals, both open) while `keys reseal` re-seals everything under B;
// after it, a server with B alone opens all of it, a rolled s3 badge's replaced secret too.
// Running reseal again changes nothing.
func TestMasterKeyRotation(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		url := st.FreshURL(t)
		keyA := base64.StdEncoding.EncodeToString(apptest.TestMasterKey)
		keyB := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 32))
		withKey := func(k string) apptest.Option {
			return apptest.WithConfig(func(c *config.Config) { c.MasterKey = k })
		}

		a := apptest.StartURL(t, st.Name, url, withKey(keyA))
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		minted := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
			Body: map[string]any{"name": "files", "product": "s3"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		replaced := minted["s3"].(map[string]any)
		// A roll leaves the replaced pair's secret sealed beside the new one, in its grace.
		s3 := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges/" + minted["badge"].(map[string]any)["id"].(string) + "/roll",
			Header: admin.Bearer()}).Expect(t, 200, nil)["s3"].(map[string]any)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/webhooks", Body: map[string]any{"url": "https://93.184.215.14/hook"},
			Header: admin.Bearer()}).Expect(t, 201, nil)
		// A sign-in provider's client secret is sealed too (SPEC §20).
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/auth/providers",
			Body: map[string]any{"preset": "google", "clientId": "g", "clientSecret": "provider-secret"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		// A TOTP app's shared secret is sealed too (SPEC §17).
		other := a.SignUp(t)
		pending := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Header: other.Bearer()}).Expect(t, 201, nil)
		totpKey := pending["secret"].(string)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm",
			Body: map[string]any{"code": totpCode(t, totpKey, a.Clock.Now())}, Header: other.Bearer()}).Expect(t, 200, nil)
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}

		reseal := func() string {
			var out, errOut bytes.Buffer
			args := []string{"keys", "reseal", "--batch=1", "--master-key=" + keyB + "," + keyA, "--database-url=" + url, "--data-dir=" + t.TempDir()}
			if code := run(args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			return out.String()
		}
		first := reseal()
		if !strings.Contains(first, "re-sealed 2 s3 secret keys") || strings.Contains(first, "re-sealed 0 signing keys") ||
			!strings.Contains(first, "re-sealed 1 webhook secrets") || !strings.Contains(first, "re-sealed 1 TOTP secrets") ||
			!strings.Contains(first, "re-sealed 1 sign-in provider secrets and upstream tokens") {
			t.Fatalf("first run: %q", first)
		}
		if again := reseal(); again != "re-sealed 0 SAML connections' SP keys\nre-sealed 0 TOTP secrets\nre-sealed 0 audit stream S3 secret keys\nre-sealed 0 audit stream signing secrets\nre-sealed 0 backchannel ping secrets\nre-sealed 0 refresh-token grace answers\nre-sealed 0 s3 secret keys\n"+
			"re-sealed 0 sign-in flows' PKCE verifiers\nre-sealed 0 sign-in provider secrets and upstream tokens\nre-sealed 0 signing keys\n"+
			"re-sealed 0 vault connections' upstream tokens\nre-sealed 0 webhook secrets\n" {
			t.Fatalf("second run: %q", again)
		}

		b := apptest.StartURL(t, st.Name, url, withKey(keyB))
		me(b, admin.Bearer()).Expect(t, 200, map[string]any{"userId": admin.UserID})
		b.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": admin.Email, "password": admin.Password}}).Expect(t, 200, nil)
		verifyS3(t, b, s3)
		verifyS3(t, b, replaced)
		// The TOTP app still signs in: its secret opens under B. Two steps on, so the step
		// that confirmed it is behind.
		b.Clock.Advance(time.Minute)
		step := b.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": other.Email, "password": other.Password}}).
			Expect(t, 200, map[string]any{"mfaRequired": true})
		b.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/verify",
			Body: map[string]any{"mfaToken": step["mfaToken"], "code": totpCode(t, totpKey, b.Clock.Now())}}).Expect(t, 200, nil)
	})
}

// totpCode is what an authenticator app shows for key at t (RFC 6238, by the library).
func totpCode(t *testing.T, key string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(key, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The secret-scanning pattern is built from every contributed kind: each matches a secret
// of its own shape, and nothing else of ours (a JWT, an email token) matches.
func TestSecretScanningPattern(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"secret-scanning", "pattern", "--database-url=sqlite:" + t.TempDir() + "/p.db", "--data-dir=" + t.TempDir()}
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	p, err := regexp.Compile(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	for _, kind := range []string{"ai", "db", "s3", "auth", "pay", "cs", "rt"} {
		tok, _ := secret.NewToken(kind)
		if !p.MatchString("found " + tok + " in .env") {
			t.Errorf("ac_%s_ is not matched", kind)
		}
	}
	for _, s := range []string{"AKAC0123456789ABCDEF", "in AKACZZZZZZZZZZZZZZZZ."} {
		if !p.MatchString(s) {
			t.Errorf("%q is not matched", s)
		}
	}
	rst, _ := secret.NewToken("rst")
	for _, s := range []string{rst, "eyJhbGciOiJFZERTQSJ9.e30.sig", "ac_ai_short"} {
		if p.MatchString(s) {
			t.Errorf("%q is matched", s)
		}
	}
}

// The operator manages the dashboard tenant's providers and methods from the command line
// (SPEC §20), under the admin API's rules; the secret comes from standard input.
func TestProvidersCommands(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--database-url=sqlite:" + dir + "/a.db", "--data-dir=" + dir}
	cli := func(in string, args ...string) (int, string, string) {
		stdin = strings.NewReader(in)
		defer func() { stdin = os.Stdin }()
		var out, errOut bytes.Buffer
		code := run(append(args, common...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errs := cli("client-secret-from-stdin\n", "providers", "add", "--preset=google", "--client-id=abc")
	if code != 0 || !strings.Contains(out, "added provider idp_") || !strings.Contains(out, "/v1/auth-core/providers/idp_") {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	id := regexp.MustCompile(`idp_[0-9A-Z]{26}`).FindString(out)
	if code, _, errs := cli("", "providers", "add", "--type=saml", "--client-id=x", "--client-secret=y"); code == 0 || !strings.Contains(errs, "validation_failed") {
		t.Fatalf("a bad provider: %d %s", code, errs)
	}
	if code, out, errs := cli("", "providers", "update", id, "--name=Google Workspace", "--no-enabled"); code != 0 || !strings.Contains(out, "Google Workspace") {
		t.Fatalf("update: %d %s %s", code, out, errs)
	}
	if code, out, errs := cli("", "providers", "methods", "--password", "--email-link"); code != 0 || !strings.Contains(out, "password=true emailLink=true") {
		t.Fatalf("methods: %d %s %s", code, out, errs)
	}
	code, out, _ = cli("", "providers", "list")
	if code != 0 || !strings.Contains(out, id+"\toidc\tGoogle Workspace\thttps://accounts.google.com\tenabled=false\tmanagedBy=operator") || !strings.Contains(out, "emailLink=true") {
		t.Fatalf("list: %d %s", code, out)
	}
	raw, _ := os.ReadFile(dir + "/a.db")
	if bytes.Contains(raw, []byte("client-secret-from-stdin")) {
		t.Fatal("the client secret is in the store in clear")
	}
	if code, out, _ := cli("", "providers", "remove", id); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("remove: %d %s", code, out)
	}
	if code, _, errs := cli("", "providers", "remove", id); code == 0 || !strings.Contains(errs, "provider_not_found") {
		t.Fatalf("remove again: %d %s", code, errs)
	}
}
