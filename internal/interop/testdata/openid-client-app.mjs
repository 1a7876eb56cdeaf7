// A project's own app signing its people in with openid-client (unmodified), as SPEC §25
// has it: a confidential client registered by the project's admin (CLIENT_ID and
// CLIENT_SECRET, client_secret_basic), default discovery, the code flow with PKCE, nonce
// and state, id_token validation, userinfo, then RP-initiated logout when asked.
// STEPS is a comma-separated list of prompt values, one authorization request each ("-"
// for none): the Go test drives the browser through each and reads what came back.
// allowInsecureRequests only because the test's issuer is http on loopback.
import * as client from 'openid-client';
import { say, need, callback, run } from './lib.mjs';

run(async () => {
  const issuer = new URL(need('ISSUER'));
  const options = { execute: [client.allowInsecureRequests] };
  const config = await client.discovery(issuer, need('CLIENT_ID'), need('CLIENT_SECRET'), client.ClientSecretBasic(need('CLIENT_SECRET')), options);
  const cb = await callback('/cb', Number(need('PORT')));
  let last = null;
  for (const [i, prompt] of need('STEPS').split(',').entries()) {
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: cb.url, scope: process.env.SCOPE || 'openid profile email', code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256', nonce, state, ...(prompt !== '-' ? { prompt } : {}),
    });
    say({ step: i, authorize: url.href });
    const landed = await cb.next();
    if (landed.searchParams.get('error')) {
      say({ step: i, error: landed.searchParams.get('error'), state: landed.searchParams.get('state') === state });
      continue;
    }
    const tokens = await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
    const claims = tokens.claims();
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    last = tokens;
    say({ step: i, claims, userinfo });
  }
  if (process.env.BYE_PORT && last) {
    const bye = await callback('/bye', Number(process.env.BYE_PORT));
    const logout = client.buildEndSessionUrl(config, { id_token_hint: last.id_token, post_logout_redirect_uri: bye.url, state: 'bye' });
    say({ logout: logout.href });
    const back = await bye.next();
    say({ loggedOut: back.searchParams.get('state') === 'bye' });
    bye.close();
  }
  say({ done: true });
  cb.close();
});
