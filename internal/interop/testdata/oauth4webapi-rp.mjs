// A confidential relying party written with oauth4webapi (unmodified) and its strict
// OpenID Connect processing: discovery by the OIDC algorithm, registration with a public
// key, the code flow, the token request authenticated by private_key_jwt (RFC 7523), the
// id_token required and checked, userinfo. allowInsecureRequests only because the test's
// issuer is http on loopback.
import * as oauth from 'oauth4webapi';
import { say, need, callback, run } from './lib.mjs';

run(async () => {
  const issuer = new URL(need('ISSUER'));
  const insecure = { [oauth.allowInsecureRequests]: true };
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }));
  const keys = await oauth.generateKeyPair('ES256', { extractable: true });
  const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey);
  const kid = 'rp-key-1';
  const cb = await callback('/cb');
  const registered = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, {
    client_name: 'oauth4webapi RP', redirect_uris: [cb.url], token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [{ ...jwk, kid, alg: 'ES256', use: 'sig' }] }, id_token_signed_response_alg: process.env.ID_TOKEN_ALG || 'RS256',
  }, insecure));
  const c = { client_id: registered.client_id, id_token_signed_response_alg: registered.id_token_signed_response_alg || 'RS256' };
  const verifier = oauth.generateRandomCodeVerifier();
  const nonce = oauth.generateRandomNonce();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint);
  for (const [k, v] of Object.entries({ client_id: c.client_id, redirect_uri: cb.url, response_type: 'code', scope: 'openid email',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce, state })) {
    url.searchParams.set(k, v);
  }
  say({ authorize: url.href, client_id: c.client_id });
  const params = oauth.validateAuthResponse(as, c, await cb.next(), state);
  const auth = oauth.PrivateKeyJwt({ key: keys.privateKey, kid });
  const response = await oauth.authorizationCodeGrantRequest(as, c, auth, params, cb.url, verifier, insecure);
  const result = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: nonce, requireIdToken: true });
  const claims = oauth.getValidatedIdTokenClaims(result);
  const userinfo = await oauth.processUserInfoResponse(as, c, claims.sub, await oauth.userInfoRequest(as, c, result.access_token, insecure));
  // The same assertion cannot be used twice: a replay is refused.
  let replayRefused = false;
  const once = oauth.PrivateKeyJwt({ key: keys.privateKey, kid }, {
    [oauth.modifyAssertion]: (_h, p) => { p.jti = 'fixed-jti-' + state; },
  });
  for (let i = 0; i < 2; i++) {
    const r = await oauth.clientCredentialsGrantRequest(as, c, once, new URLSearchParams(), insecure);
    if (i === 1) replayRefused = r.status === 401 && (await r.json()).error === 'invalid_client';
  }
  say({ result: { claims, userinfo, scope: result.scope, replayRefused } });
  cb.close();
});
