package httpserver_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/httpserver"
)

func ipRoute() []httpserver.Route {
	return []httpserver.Route{{Method: http.MethodGet, Path: "/test/ip", Handlers: []fiber.Handler{func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"ip": httpserver.ClientIP(c), "scheme": c.Protocol()})
	}}}}
}

// SPEC §9a: X-Forwarded-For and X-Forwarded-Proto count only from trusted proxies.
func TestForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	forged := map[string]string{"X-Forwarded-For": "1.2.3.4, 203.0.113.9", "X-Forwarded-Proto": "https"}
	t.Run("no proxy trusted (the default): the peer", func(t *testing.T) {
		a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(ipRoute)))
		a.Do(testkit.Req{Path: "/test/ip", Header: forged}).Expect(t, 200, map[string]any{"ip": "127.0.0.1", "scheme": "http"})
	})
	t.Run("the peer is a trusted proxy: the rightmost untrusted hop", func(t *testing.T) {
		a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(ipRoute)),
			testkit.WithConfig(func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.0/8"} }))
		a.Do(testkit.Req{Path: "/test/ip", Header: forged}).Expect(t, 200, map[string]any{"ip": "203.0.113.9", "scheme": "https"})
	})
	t.Run("a bad CIDR stops the process with the setting named", func(t *testing.T) {
		c := config.Config{TrustedProxies: []string{"10.0.0.0/33"}}
		if _, err := config.ParseTrustedProxies(c.TrustedProxies); err == nil || !strings.Contains(err.Error(), "AUTHCORE_TRUSTED_PROXIES") {
			t.Fatalf("%v", err)
		}
	})
}

// SPEC §9a: a request whose body two parsers could frame differently gets 400 and the
// connection is closed, so a request smuggled behind it is never read.
func TestAmbiguousFramingIsRefused(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(testRoutes)))
	host := strings.TrimPrefix(a.Base, "http://")
	smuggled := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	for name, head := range map[string]string{
		"two differing Content-Length": "Content-Length: 5\r\nContent-Length: " + strconv.Itoa(5+len(smuggled)) + "\r\n",
		"Content-Length then chunked":  "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
		"chunked then Content-Length":  "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := "0\r\n\r\n"
			req := "POST /test/echo/1 HTTP/1.1\r\nHost: x\r\n" + head + "\r\n" + body + smuggled
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != 400 || !strings.Contains(string(b), `"code":"bad_request"`) {
				t.Fatalf("%d %s", res.StatusCode, b)
			}
			if second, err := http.ReadResponse(br, nil); err == nil {
				t.Fatalf("the smuggled request was answered: %d", second.StatusCode)
			}
		})
	}
	t.Run("one Content-Length, or the same one twice, passes", func(t *testing.T) {
		for _, head := range []string{"Content-Length: 2\r\n", "Content-Length: 2\r\nContent-Length: 2\r\n"} {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(conn, "POST /test/echo/1 HTTP/1.1\r\nHost: x\r\n"+head+"\r\nab")
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			conn.Close()
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("%q: %v %v", head, res, err)
			}
		}
	})
}
