// A machine client written with the MCP TypeScript SDK's client-credentials providers
// (unmodified): given only the MCP server's URL and its credentials, it follows the
// server's 401 to authcore (RFC 9728 → RFC 8414), asks for the scope the challenge names
// with the server as resource, and calls a tool. AUTH is secret or private_key_jwt.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { say, need, run } from './lib.mjs';

run(async () => {
  const server = new URL(need('SERVER'));
  const expectedIssuer = need('ISSUER');
  const scope = process.env.SCOPE || undefined; // configured, or none: the server's default
  const authProvider = need('AUTH') === 'private_key_jwt'
    ? new PrivateKeyJwtProvider({ clientId: need('CLIENT_ID'), privateKey: need('PRIVATE_KEY_PEM'), algorithm: 'ES256', expectedIssuer, scope })
    : new ClientCredentialsProvider({ clientId: need('CLIENT_ID'), clientSecret: need('CLIENT_SECRET'), expectedIssuer, scope });
  const client = new Client({ name: 'machine', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(server, { authProvider }));
  const got = await client.callTool({ name: 'whoami', arguments: {} });
  say({ result: got.content[0].text, scope: authProvider.tokens()?.scope });
  await client.close();
});
