// An agent's client written with openid-client (unmodified): OpenID CIBA backchannel
// authentication with RFC 9396 authorization_details (SPEC §23), in poll mode, or in ping
// mode with a loopback notification endpoint that checks the ping's bearer token and its
// Standard Webhooks signature before collecting the tokens. The client authenticates with
// client_secret_post: an agent token acting as a client (its id and the token itself).
// allowInsecureRequests only because the test's issuer is http on loopback.
import http from 'node:http';
import crypto from 'node:crypto';
import * as client from 'openid-client';
import { say, need, run } from './lib.mjs';

// ping waits for one notification on port, and checks it as a receiver must: the bearer
// token it gave, and webhook-signature = v1,<base64 HMAC-SHA256 of id.timestamp.body>
// under the whsec_ secret.
function ping(port, token, secret) {
  return new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const id = req.headers['webhook-id'];
        const ts = req.headers['webhook-timestamp'];
        const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
        const want = 'v1,' + crypto.createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
        const given = String(req.headers['webhook-signature'] || '').split(' ');
        const signed = given.some((s) => s.length === want.length && crypto.timingSafeEqual(Buffer.from(s), Buffer.from(want)));
        res.writeHead(204).end();
        server.close();
        resolve({ body: JSON.parse(body), bearer: req.headers.authorization === `Bearer ${token}`, signed, id });
      });
      req.on('error', reject);
    });
    server.listen(Number(port), '127.0.0.1');
  });
}

// refusals asks what the server must refuse, through the same library, and reports each
// error code: a detail of a type the project did not register, a detail its schema refuses
// (a tampered amount), a login_hint of a user outside the project, a poll sooner than the
// interval, and details sent again, altered, with the token request.
async function refusals(config, base) {
  const code = async (p) => {
    try { await p; return 'accepted'; } catch (err) { return err.error || err.code || String(err); }
  };
  const out = {};
  out.unregisteredType = await code(client.initiateBackchannelAuthentication(config, { ...base, authorization_details: need('DETAILS_UNREGISTERED') }));
  out.tamperedDetails = await code(client.initiateBackchannelAuthentication(config, { ...base, authorization_details: need('DETAILS_TAMPERED') }));
  out.outsideHint = await code(client.initiateBackchannelAuthentication(config, { ...base, login_hint: need('LOGIN_HINT_OUTSIDE') }));
  const started = await client.initiateBackchannelAuthentication(config, base);
  const grant = (extra) => client.genericGrantRequest(config, 'urn:openid:params:grant-type:ciba', { auth_req_id: started.auth_req_id, ...extra });
  out.tooFast = await code(grant({}));
  out.detailsAtTheTokenEndpoint = await code(grant({ authorization_details: need('DETAILS_TAMPERED') }));
  return out;
}

run(async () => {
  const config = await client.discovery(new URL(need('ISSUER')), need('CLIENT_ID'), need('CLIENT_SECRET'), undefined,
    { execute: [client.allowInsecureRequests] });
  const params = {
    scope: process.env.SCOPE || 'openid', login_hint: need('LOGIN_HINT'), binding_message: process.env.BINDING || '',
    authorization_details: need('DETAILS'), requested_expiry: process.env.EXPIRY || '300',
  };
  if (process.env.REFUSALS) {
    say({ refusals: await refusals(config, params) });
    return;
  }
  // In ping mode the token the ping must carry is ours to choose; the receiver listens
  // before the request is made, so no ping can come before it does.
  const token = process.env.PING_PORT ? 'notify-' + crypto.randomUUID() : '';
  const pinged = token ? ping(process.env.PING_PORT, token, need('PING_SECRET')) : null;
  if (token) params.client_notification_token = token;
  const started = await client.initiateBackchannelAuthentication(config, params);
  say({ started: { expires_in: started.expires_in, interval: started.interval } });
  if (pinged) {
    const got = await pinged;
    say({ ping: { bearer: got.bearer, signed: got.signed, sameRequest: got.body.auth_req_id === started.auth_req_id } });
  }
  try {
    const tokens = await client.pollBackchannelAuthenticationGrant(config, started);
    say({ result: { access_token: tokens.access_token, authorization_details: tokens.authorization_details, scope: tokens.scope, sub: tokens.claims().sub } });
  } catch (err) {
    say({ result: { error: err.error || err.code || String(err) } });
  }
});
