package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/authcore/authcore/platform/apperr"
)

// FuzzBasicAuth: any Authorization header is judged without panicking, and a client id
// and secret encoded as RFC 6749 §2.3.1 says come back as they were.
func FuzzBasicAuth(f *testing.F) {
	for _, s := range []string{"Basic Y2xpOnNlY3JldA==", "basic Y2xp", "Basic !!!", "Basic JTIy", "Bearer x", ""} {
		f.Add(s, "cli_1", "ac_cs_secret")
	}
	f.Fuzz(func(t *testing.T, header, id, secret string) {
		_, _, _, _ = basicCredentials(header)
		_, _ = ClientCredentials(header, url.Values{"client_secret": {secret}, "client_id": {id}})
		h := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
		gotID, gotSecret, present, err := basicCredentials(h)
		if err != nil || !present || gotID != id || gotSecret != secret {
			t.Fatalf("basicCredentials(%q) = %q, %q, %v, %v; want %q, %q", h, gotID, gotSecret, present, err, id, secret)
		}
	})
}

// signed is a JWT whose iss and sub are client, signed by a throwaway key (nothing here
// verifies it: the client's registered keys do, later).
func signed(t *testing.T, iss, sub string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: iss, Subject: sub, ID: "j1"}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Every method a client may use is read as what it is, and a request that uses more than
// one is refused (RFC 6749 §2.3), whichever two.
func TestClientCredentials(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("cli%3A1:s%26cret"))
	jwtOf := signed(t, "cli_2", "cli_2")
	asserted := url.Values{"client_assertion_type": {AssertionType}, "client_assertion": {jwtOf}}
	with := func(v url.Values, kv ...string) url.Values {
		out := url.Values{}
		for k, vs := range v {
			out[k] = vs
		}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, c := range []struct {
		name          string
		authorization string
		form          url.Values
		want          Credentials
		code          string // the error's, "" for none
	}{
		{"nothing: no method, the public client's id", "", url.Values{"client_id": {"pub"}}, Credentials{ID: "pub"}, ""},
		{"a Bearer header is no client authentication", "Bearer tok", nil, Credentials{}, ""},
		{"client_secret_basic, each part form-decoded", basic, nil, Credentials{Method: AuthSecretBasic, ID: "cli:1", Secret: "s&cret"}, ""},
		{"client_secret_basic with its own client_id", basic, url.Values{"client_id": {"cli:1"}}, Credentials{Method: AuthSecretBasic, ID: "cli:1", Secret: "s&cret"}, ""},
		{"client_secret_post", "", url.Values{"client_id": {"cli_3"}, "client_secret": {"s"}}, Credentials{Method: AuthSecretPost, ID: "cli_3", Secret: "s"}, ""},
		{"private_key_jwt", "", asserted, Credentials{Method: AuthPrivateKeyJWT, ID: "cli_2", Assertion: jwtOf}, ""},
		{"private_key_jwt with its own client_id", "", with(asserted, "client_id", "cli_2"), Credentials{Method: AuthPrivateKeyJWT, ID: "cli_2", Assertion: jwtOf}, ""},

		{"basic and post", basic, url.Values{"client_id": {"cli:1"}, "client_secret": {"s"}}, Credentials{}, "invalid_request"},
		{"basic and an assertion", basic, asserted, Credentials{}, "invalid_request"},
		{"basic and an assertion type alone", basic, url.Values{"client_assertion_type": {AssertionType}}, Credentials{}, "invalid_request"},
		{"post and an assertion", "", with(asserted, "client_id", "cli_2", "client_secret", "s"), Credentials{}, "invalid_request"},
		{"all three", basic, with(asserted, "client_secret", "s"), Credentials{}, "invalid_request"},

		{"a malformed Basic header", "Basic !!!", nil, Credentials{}, "invalid_client"},
		{"a Basic header without a colon", "Basic " + base64.StdEncoding.EncodeToString([]byte("cli")), nil, Credentials{}, "invalid_client"},
		{"basic naming another client_id", basic, url.Values{"client_id": {"other"}}, Credentials{}, "invalid_request"},
		{"a posted secret without client_id", "", url.Values{"client_secret": {"s"}}, Credentials{}, "invalid_client"},
		{"an assertion of another type", "", with(asserted, "client_assertion_type", "urn:x"), Credentials{}, "invalid_client"},
		{"an assertion type without an assertion", "", url.Values{"client_assertion_type": {AssertionType}}, Credentials{}, "invalid_client"},
		{"an assertion that is no JWT", "", with(asserted, "client_assertion", "x.y.z"), Credentials{}, "invalid_client"},
		{"an assertion whose iss is not its sub", "", with(asserted, "client_assertion", signed(t, "a", "b")), Credentials{}, "invalid_client"},
		{"an assertion naming another client_id", "", with(asserted, "client_id", "other"), Credentials{}, "invalid_client"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ClientCredentials(c.authorization, c.form)
			if c.code == "" {
				if err != nil || got != c.want {
					t.Fatalf("ClientCredentials = %+v, %v; want %+v", got, err, c.want)
				}
				return
			}
			e, ok := err.(*apperr.Error)
			if !ok || e.Code != c.code {
				t.Fatalf("ClientCredentials = %+v, %v; want %s", got, err, c.code)
			}
		})
	}
}

// One parser of client credentials: nothing outside this package reads client_secret or
// client_assertion from a request, nor decodes a Basic header, so no endpoint can accept
// two methods at once or decode one differently. A hand-written second parser is known by
// what it must do: look a credential's form field up, or take a Basic header apart
// (BasicAuth(), or the "Basic " prefix spelled out).
func TestNoClientCredentialsParsedOutsideOAuth(t *testing.T) {
	fields := map[string]bool{"client_secret": true, "client_assertion": true, "client_assertion_type": true}
	readers := map[string]bool{"Get": true, "FormValue": true, "PostFormValue": true, "Has": true, "Peek": true, "PeekMulti": true, "Query": true, "Params": true}
	root := "../.."
	files := 0
	for _, dir := range []string{"cmd", "modules", "platform", "plugins"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == "platform/oauth" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			files++
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			lit := func(e ast.Expr) string {
				if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
					s, _ := strconv.Unquote(b.Value)
					return s
				}
				return ""
			}
			bad := func(n ast.Node, what string) {
				t.Errorf("%s: %s: client credentials are read by oauth.ClientCredentials alone", fset.Position(n.Pos()), what)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.IndexExpr:
					if fields[lit(n.Index)] {
						bad(n, "indexes "+lit(n.Index))
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if sel.Sel.Name == "BasicAuth" && len(n.Args) == 0 {
						bad(n, "reads a Basic header with BasicAuth()")
					}
					for _, a := range n.Args {
						if readers[sel.Sel.Name] && fields[lit(a)] {
							bad(n, sel.Sel.Name+"("+strconv.Quote(lit(a))+")")
						}
					}
				case *ast.BasicLit:
					// The scheme's prefix, to cut a header: net/http's BasicAuth does not
					// undo RFC 6749 §2.3.1's form-urlencoding, a hand-written cut forgets to.
					// The bench is a client: it writes one.
					if strings.EqualFold(lit(n), "Basic ") && !strings.HasPrefix(rel, "cmd/authcore/bench") {
						bad(n, "spells the Basic scheme's prefix")
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("scanned %d files: the walk missed the tree", files)
	}
}
