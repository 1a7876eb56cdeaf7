// An MCP server built with the official TypeScript SDK, as a team would protect it with
// authcore: RFC 9728 metadata naming authcore, and the SDK's bearer middleware requiring
// a scope (REQUIRED_SCOPE, e.g. mcp:tools), with tokens verified offline by jose against
// authcore's JWKS for this server's URL as audience. Nothing in it is authcore's.
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { say, need, run } from './lib.mjs';

run(async () => {
  const issuer = need('ISSUER');
  const port = Number(need('PORT'));
  const required = need('REQUIRED_SCOPE');
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const oauthMetadata = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
  const jwks = createRemoteJWKSet(new URL(oauthMetadata.jwks_uri));
  const verifier = {
    async verifyAccessToken(token) {
      const { payload } = await jwtVerify(token, jwks, { issuer, audience: url.href, typ: 'at+jwt' });
      return { token, clientId: payload.client_id, scopes: String(payload.scope || '').split(' ').filter(Boolean),
        expiresAt: payload.exp, resource: url, extra: { sub: payload.sub } };
    },
  };
  const app = express();
  app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: url, scopesSupported: [required] }));
  const auth = requireBearerAuth({ verifier, requiredScopes: [required], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url) });
  app.post('/mcp', express.json(), auth, async (req, res) => {
    const server = new McpServer({ name: 'interop', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who the token says the caller is' }, async (extra) => ({
      content: [{ type: 'text', text: `client=${extra.authInfo.clientId} sub=${extra.authInfo.extra.sub} scope=${extra.authInfo.scopes.join(' ')}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  await new Promise((resolve) => app.listen(port, '127.0.0.1', resolve));
  say({ ready: url.href });
  await new Promise(() => {}); // serves until the test kills it
});
