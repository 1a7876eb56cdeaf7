// A relying party written with openid-client (unmodified), as a platform's own app would
// sign people in with authcore: default OIDC discovery, dynamic registration, the code
// flow with PKCE and nonce, id_token validation, userinfo, refresh, RP-initiated logout.
// allowInsecureRequests only because the test's issuer is http on loopback.
import * as client from 'openid-client';
import { say, need, callback, run } from './lib.mjs';

run(async () => {
  const issuer = new URL(need('ISSUER'));
  const options = { execute: [client.allowInsecureRequests] };
  const cb = await callback('/cb');
  const bye = await callback('/bye');
  const config = await client.dynamicClientRegistration(issuer, {
    client_name: 'openid-client RP', redirect_uris: [cb.url], post_logout_redirect_uris: [bye.url],
    token_endpoint_auth_method: 'none', response_types: ['code'], grant_types: ['authorization_code', 'refresh_token'],
  }, client.None(), options);
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: cb.url, scope: 'openid profile email offline_access', code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256', nonce, state, ...(process.env.RESOURCE ? { resource: process.env.RESOURCE } : {}),
  });
  say({ authorize: url.href, client_id: config.clientMetadata().client_id });
  const tokens = await client.authorizationCodeGrant(config, await cb.next(), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
  const claims = tokens.claims();
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
  const logout = client.buildEndSessionUrl(config, { id_token_hint: refreshed.id_token || tokens.id_token, post_logout_redirect_uri: bye.url, state: 'bye-' + state });
  say({ logout: logout.href });
  const back = await bye.next();
  say({ result: { claims, userinfo, refreshedSub: refreshed.claims().sub, logoutState: back.searchParams.get('state'), expectedState: 'bye-' + state } });
  cb.close();
  bye.close();
});
