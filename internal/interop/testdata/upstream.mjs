// An upstream OpenID Provider for authcore's federation tests (SPEC §20): oidc-provider,
// certified by the OpenID Foundation, on a loopback port, with its own login and consent
// pages (devInteractions). The Go side (internal/interop.Upstream) starts one per test
// package and configures it over a few test-only routes under /__test/:
//   POST /__test/accounts  {id, email, email_verified, name}   an account to sign in as
//   POST /__test/clients   {client_id, client_secret, redirect_uris}
//   POST /__test/tamper    {client_id, mode}   what the token endpoint does to that client's
//                          answers: "" (nothing), "alg_none", "other_issuer",
//                          "wrong_nonce", "unavailable" (503 after answering), "down" (503
//                          before doing anything: the provider is down)
//   POST /__test/forget    {client_id}   the upstream forgets that client's refresh tokens (a
//                          person revoked its access there)
//   GET  /__test/counts?client_id=   what the token vault's tests count (SPEC §23): that
//                          client's refresh_token grants and revocations, and its live
//                          refresh tokens
// It prints "ISSUER <url>" once it listens, and exits when its standard input closes.
import http from 'node:http';
import { generateKeyPair, exportJWK, SignJWT, decodeJwt, decodeProtectedHeader, base64url } from 'jose';
import Provider from 'oidc-provider';

const accounts = new Map();
const tamper = new Map();
const counts = new Map(); // client_id → { refresh, revocation }
const countOf = (id) => { if (!counts.has(id)) counts.set(id, { refresh: 0, revocation: 0 }); return counts.get(id); };
const clients = new Map();

// A memory adapter whose clients the Go side writes (oidc-provider's own keeps its store private).
const stores = new Map();
class Adapter {
  constructor(name) {
    this.name = name;
    if (!stores.has(name)) stores.set(name, new Map());
    this.store = name === 'Client' ? clients : stores.get(name);
  }
  async upsert(id, payload, expiresIn) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : undefined;
    this.store.set(id, { payload, expiresAt });
    if (payload.grantId) {
      const g = stores.get('grants') || new Map();
      stores.set('grants', g);
      const list = g.get(payload.grantId) || [];
      list.push([this.name, id]);
      g.set(payload.grantId, list);
    }
    if (payload.uid) this.store.set(`uid:${payload.uid}`, { payload: { id }, expiresAt });
  }
  async find(id) {
    const e = this.store.get(id);
    if (!e) return undefined;
    if (e.expiresAt && e.expiresAt < Date.now()) { this.store.delete(id); return undefined; }
    return e.payload;
  }
  async findByUid(uid) {
    const e = this.store.get(`uid:${uid}`);
    return e ? this.find(e.payload.id) : undefined;
  }
  async findByUserCode() { return undefined; }
  async consume(id) {
    const e = this.store.get(id);
    if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) { this.store.delete(id); }
  async revokeByGrantId(grantId) {
    const g = stores.get('grants');
    for (const [name, id] of (g && g.get(grantId)) || []) stores.get(name)?.delete(id);
  }
}
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signing = { ...(await exportJWK(privateKey)), kid: 'upstream-1', alg: 'RS256', use: 'sig' };
// Another issuer's key: tokens signed with it come from nobody the server trusts.
const other = await generateKeyPair('RS256');

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
// localhost, not 127.0.0.1: the browser keeps this provider's cookies apart from authcore's.
const issuer = `http://localhost:${server.address().port}`;

const provider = new Provider(issuer, {
  adapter: Adapter,
  jwks: { keys: [signing] },
  cookies: { keys: ['authcore-interop-upstream'] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
  scopes: ['openid', 'email', 'profile', 'offline_access'],
  features: { devInteractions: { enabled: true }, userinfo: { enabled: true }, revocation: { enabled: true } },
  pkce: { required: () => true },
  async findAccount(ctx, id) {
    const a = accounts.get(id);
    if (!a) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...a }; } };
  },
  ttl: { Session: 3600, Interaction: 600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Grant: 3600 },
});
provider.proxy = false;

// reSign makes the id_token say what a tampering mode wants, signed with our key (so only
// the claim under test is wrong), with another issuer's, or not at all.
async function reSign(idToken, mode) {
  const claims = decodeJwt(idToken);
  const header = decodeProtectedHeader(idToken);
  switch (mode) {
    case 'alg_none': {
      const h = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
      return `${h}.${base64url.encode(JSON.stringify(claims))}.`;
    }
    case 'other_issuer':
      return new SignJWT({ ...claims, iss: 'http://issuer.invalid' })
        .setProtectedHeader({ alg: 'RS256', kid: 'other-1' }).sign(other.privateKey);
    case 'other_issuer_our_key':
      return new SignJWT({ ...claims, iss: 'http://issuer.invalid' })
        .setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(privateKey);
    case 'wrong_nonce':
      return new SignJWT({ ...claims, nonce: 'not-the-nonce-you-sent' })
        .setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(privateKey);
    case 'expired':
      return new SignJWT({ ...claims, iat: claims.iat - 7200, exp: claims.iat - 3600 })
        .setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(privateKey);
    case 'other_audience':
      return new SignJWT({ ...claims, aud: 'someone-else' })
        .setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(privateKey);
    default:
      return idToken;
  }
}

// The provider being down: its token endpoint answers 503 before it reads the request.
provider.use(async (ctx, next) => {
  if (ctx.path === '/token' && ctx.method === 'POST') {
    const id = clientIdOf(ctx.headers.authorization);
    if (id && tamper.get(id) === 'down') {
      ctx.status = 503;
      ctx.body = { error: 'temporarily_unavailable', error_description: 'upstream is down (test)' };
      return;
    }
  }
  await next();
  // Count what succeeded (the vault's tests hold refreshes to one per expiry).
  if (ctx.status === 200 && ctx.oidc?.client) {
    if (ctx.oidc.route === 'token' && ctx.oidc.params?.grant_type === 'refresh_token') countOf(ctx.oidc.client.clientId).refresh += 1;
    if (ctx.oidc.route === 'revocation') countOf(ctx.oidc.client.clientId).revocation += 1;
  }
});

function clientIdOf(authorization) {
  if (!authorization || !authorization.startsWith('Basic ')) return '';
  return decodeURIComponent(Buffer.from(authorization.slice(6), 'base64').toString().split(':')[0]);
}

provider.use(async (ctx, next) => {
  await next();
  if (ctx.oidc?.route !== 'token' || !ctx.oidc.client) return;
  const mode = tamper.get(ctx.oidc.client.clientId);
  if (!mode) return;
  if (mode === 'unavailable') {
    ctx.status = 503;
    ctx.body = { error: 'temporarily_unavailable', error_description: 'upstream is down (test)' };
    return;
  }
  if (ctx.status === 200 && ctx.body && ctx.body.id_token) {
    ctx.body = { ...ctx.body, id_token: await reSign(ctx.body.id_token, mode) };
  }
});

async function readJSON(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString() || '{}');
}

const callback = provider.callback();
server.on('request', async (req, res) => {
  if (!req.url.startsWith('/__test/')) return callback(req, res);
  if (req.method === 'GET' && req.url.startsWith('/__test/counts?')) {
    const id = new URL(req.url, issuer).searchParams.get('client_id');
    let live = 0;
    for (const { payload, expiresAt } of (stores.get('RefreshToken') || new Map()).values()) {
      if (payload.clientId === id && !payload.consumed && (!expiresAt || expiresAt > Date.now())) live += 1;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...countOf(id), liveRefreshTokens: live }));
    return;
  }
  try {
    const body = await readJSON(req);
    switch (req.url) {
      case '/__test/accounts': {
        const { id, ...claims } = body;
        accounts.set(id, claims);
        break;
      }
      case '/__test/clients':
        clients.set(body.client_id, {
          payload: {
            client_id: body.client_id, client_secret: body.client_secret, redirect_uris: body.redirect_uris,
            grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
            token_endpoint_auth_method: body.token_endpoint_auth_method || 'client_secret_basic',
          },
        });
        break;
      case '/__test/forget':
        for (const [id, { payload }] of stores.get('RefreshToken') || new Map()) {
          if (payload.clientId === body.client_id) stores.get('RefreshToken').delete(id);
        }
        break;
      case '/__test/tamper':
        if (body.mode) tamper.set(body.client_id, body.mode); else tamper.delete(body.client_id);
        break;
      default:
        res.writeHead(404).end();
        return;
    }
    res.writeHead(204).end();
  } catch (err) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
  }
});

process.stdout.write(`ISSUER ${issuer}\n`);
process.stdin.resume();
process.stdin.on('end', () => { server.close(); process.exit(0); });
