// An MCP host written with the TypeScript SDK (unmodified) whose client ID metadata
// document declares private_key_jwt, as the largest hosts' documents do: the SDK sends the
// document's URL as client_id, the person approves in a browser, and the SDK redeems the
// code signing a client assertion with the host's key (the SDK's createPrivateKeyJwtAuth).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { say, need, callback, run } from './lib.mjs';

run(async () => {
  const server = new URL(need('SERVER'));
  const metadataURL = need('CLIENT_METADATA_URL');
  const cb = await callback('/callback', Number(need('REDIRECT_PORT')));
  let tokens, verifier, info;
  const provider = {
    clientMetadataUrl: metadataURL,
    get redirectUrl() { return cb.url; },
    get clientMetadata() {
      return { client_name: 'Interop Host', redirect_uris: [cb.url], grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'], token_endpoint_auth_method: 'private_key_jwt' };
    },
    clientInformation: () => info,
    saveClientInformation: (i) => { info = i; },
    tokens: () => tokens,
    saveTokens: (t) => { tokens = t; },
    redirectToAuthorization: (url) => say({ authorize: url.href }),
    saveCodeVerifier: (v) => { verifier = v; },
    codeVerifier: () => verifier,
    addClientAuthentication: createPrivateKeyJwtAuth({
      issuer: metadataURL, subject: metadataURL, privateKey: JSON.parse(need('PRIVATE_JWK')), alg: 'ES256',
    }),
  };
  const connect = async () => {
    const client = new Client({ name: 'host', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(server, { authProvider: provider });
    try {
      await client.connect(transport);
      return client;
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      const landed = await cb.next();
      await transport.finishAuth(landed.searchParams.get('code'));
      const again = new Client({ name: 'host', version: '1.0.0' });
      await again.connect(new StreamableHTTPClientTransport(server, { authProvider: provider }));
      return again;
    }
  };
  const client = await connect();
  const got = await client.callTool({ name: 'whoami', arguments: {} });
  say({ result: got.content[0].text, scope: tokens && tokens.scope, refresh: Boolean(tokens && tokens.refresh_token) });
  await client.close();
  cb.close();
});
