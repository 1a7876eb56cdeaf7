// An enterprise user's agent crossing to another company's authorization server (SPEC §22,
// draft-ietf-oauth-identity-assertion-authz-grant, the MCP enterprise-managed
// authorization extension), with oauth4webapi and jose building each request (the MCP
// TypeScript SDK has no cross-app access client yet): at the enterprise's IdP, the person's
// id_token becomes an ID-JAG by token exchange; at the resource's authorization server,
// the ID-JAG becomes a DPoP-bound access token by the jwt-bearer grant, retrying once with
// the server's DPoP nonce as RFC 9449 §8 has it. A workload's platform token gets a token
// the same way. allowInsecureRequests only because the test's issuers are http on loopback.
import * as oauth from 'oauth4webapi';
import * as jose from 'jose';
import { say, need, run } from './lib.mjs';

const insecure = { [oauth.allowInsecureRequests]: true };

async function discover(issuer) {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, insecure));
}

// grant posts a token request, once more with the nonce when the server asks for one.
async function grant(as, client, auth, type, params, options = {}) {
  const request = () => oauth.genericTokenEndpointRequest(as, client, auth, type, params, { ...insecure, ...options });
  try {
    return await oauth.processGenericTokenEndpointResponse(as, client, await request(), options);
  } catch (err) {
    if (!options.DPoP || !oauth.isDPoPNonceError(err)) throw err;
    return oauth.processGenericTokenEndpointResponse(as, client, await request(), options);
  }
}

run(async () => {
  const idp = await discover(need('IDP_ISSUER'));
  const rs = await discover(need('RS_ISSUER'));
  const resource = need('RESOURCE');
  if (!rs.authorization_grant_profiles_supported?.includes('urn:ietf:params:oauth:grant-profile:id-jag') ||
      !rs.grant_types_supported?.includes('urn:ietf:params:oauth:grant-type:jwt-bearer') ||
      !rs.dpop_signing_alg_values_supported?.includes('ES256')) {
    throw new Error('the resource authorization server does not advertise ID-JAG and DPoP: ' + JSON.stringify(rs));
  }

  // At the IdP: the ID-JAG, for the resource's authorization server and the client it knows.
  const app = { client_id: need('IDP_CLIENT_ID') };
  const jag = await grant(idp, app, oauth.ClientSecretBasic(need('IDP_CLIENT_SECRET')), 'urn:ietf:params:oauth:grant-type:token-exchange', {
    requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag', subject_token: need('ID_TOKEN'),
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token', audience: rs.issuer, resource, scope: need('SCOPE'),
  }, { recognizedTokenTypes: { n_a: () => {} } });
  const header = jose.decodeProtectedHeader(jag.access_token);
  const claims = await jose.jwtVerify(jag.access_token, jose.createRemoteJWKSet(new URL(idp.jwks_uri)), {
    issuer: idp.issuer, audience: rs.issuer, typ: 'oauth-id-jag+jwt',
  });

  // At the resource's authorization server: the ID-JAG for a token bound to the agent's key.
  const agent = { client_id: need('RS_CLIENT_ID') };
  const keys = await oauth.generateKeyPair('ES256');
  const DPoP = oauth.DPoP(agent, keys);
  const token = await grant(rs, agent, oauth.ClientSecretBasic(need('RS_CLIENT_SECRET')), 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    { assertion: jag.access_token, resource }, { DPoP });
  const at = await jose.jwtVerify(token.access_token, jose.createRemoteJWKSet(new URL(rs.jwks_uri)), { issuer: rs.issuer, audience: resource, typ: 'at+jwt' });
  const jkt = await jose.calculateJwkThumbprint(await crypto.subtle.exportKey('jwk', keys.publicKey));

  // A workload: its platform token is its only credential, so the request names no client
  // (oauth4webapi always sends a client_id: this one is plain fetch, as a pod's curl is).
  const res = await fetch(rs.token_endpoint, { method: 'POST', body: new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: need('WORKLOAD_TOKEN'), resource }) });
  const workload = await res.json();
  if (res.status !== 200) throw new Error('workload grant: ' + JSON.stringify(workload));

  say({ result: {
    jag: { typ: header.typ, issued_token_type: jag.issued_token_type, token_type: jag.token_type, client_id: claims.payload.client_id, sub: claims.payload.sub },
    token: { token_type: token.token_type, scope: token.scope, sub: at.payload.sub, client_id: at.payload.client_id, bound: at.payload.cnf?.jkt === jkt },
    workload: { token_type: workload.token_type, scope: workload.scope },
  } });
});
