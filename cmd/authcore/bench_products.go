package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// mintBadge creates a badge through the API and returns the create answer.
func mintBadge(env *benchEnv, productKey string) (map[string]any, error) {
	admin, prj, err := benchProject(env)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	body := fmt.Sprintf(`{"name":"bench","product":%q,"role":"developer"}`, productKey)
	err = benchCall(env, http.MethodPost, "/v1/projects/"+prj+"/service-badges", admin.AccessToken, []byte(body), http.StatusCreated, &out)
	return out, err
}

// benchAgentToken mints an agent token in the bench project.
func benchAgentToken(env *benchEnv) (string, error) {
	admin, prj, err := benchProject(env)
	if err != nil {
		return "", err
	}
	return mintOne(env, admin, prj)
}

// basicHeaders are the headers of a form request authenticated as an auth badge's client.
func basicHeaders(auth map[string]any) map[string]string {
	basic := base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(auth["clientId"].(string)) + ":" + url.QueryEscape(auth["clientSecret"].(string))))
	return map[string]string{"Authorization": "Basic " + basic, "Content-Type": "application/x-www-form-urlencoded"}
}

func productScenarios() []scenario {
	return []scenario{
		{name: "POST /v1/oauth/introspect (cached agent token)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			out, err := mintBadge(env, "auth")
			if err != nil {
				return request{}, err
			}
			tok, err := benchAgentToken(env)
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodPost, Path: "/v1/oauth/introspect", Body: []byte(url.Values{"token": {tok}}.Encode()),
				Header: basicHeaders(out["auth"].(map[string]any)), Expect: 200}, nil
		}},
		{name: "POST /v1/oauth/token (token exchange)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			// Tokens are issued only for a resource the agent token's project registered (SPEC §11).
			admin, prj, err := benchProject(env)
			if err != nil {
				return request{}, err
			}
			tok, err := mintOne(env, admin, prj)
			if err != nil {
				return request{}, err
			}
			resource := "https://mcp.example.com/" + strings.ToLower(prj)
			var got map[string]any
			if err := benchCall(env, http.MethodPost, "/v1/projects/"+prj+"/oauth/resources", admin.AccessToken,
				[]byte(`{"uri":"`+resource+`","name":"bench"}`), http.StatusCreated, &got); err != nil {
				return request{}, err
			}
			form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {tok},
				"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {resource}}
			return request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: []byte(form.Encode()),
				Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Expect: 200}, nil
		}},
		{name: "POST /v1/oauth/token (client credentials)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			out, err := mintBadge(env, "auth")
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: []byte("grant_type=client_credentials"),
				Header: basicHeaders(out["auth"].(map[string]any)), Expect: 200}, nil
		}},
		{name: "POST /v1/service-badges/s3/verify (SigV4 GET)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			out, err := mintBadge(env, "s3")
			if err != nil {
				return request{}, err
			}
			s := out["s3"].(map[string]any)
			req, _ := http.NewRequest(http.MethodGet, s["endpoint"].(string)+"/"+s["bucket"].(string)+"/objects/report.pdf", nil)
			const hash = "UNSIGNED-PAYLOAD"
			req.Header.Set("X-Amz-Content-Sha256", hash)
			signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
			creds := aws.Credentials{AccessKeyID: s["accessKeyId"].(string), SecretAccessKey: s["secretAccessKey"].(string)}
			if err := signer.SignHTTP(ctx, creds, req, hash, "s3", s["region"].(string), time.Now()); err != nil {
				return request{}, err
			}
			headers := map[string]string{"host": req.Host}
			for k, v := range req.Header {
				headers[strings.ToLower(k)] = v[0]
			}
			body, _ := json.Marshal(map[string]any{"method": "GET", "path": req.URL.EscapedPath(), "query": "", "headers": headers, "payloadHash": hash})
			return request{Method: http.MethodPost, Path: "/v1/service-badges/s3/verify", Body: body, Expect: 200}, nil
		}},
	}
}
