// An agent holding a DPoP-bound agent token (RFC 9449, SPEC §22), with the dpop package
// for its proofs and oauth4webapi's DPoP support for the token exchange and the call to a
// resource server: the key never leaves the agent; the admin binds the token to its
// thumbprint. It also tries what a thief would: the token without a proof, another key's
// proof, a proof replayed. allowInsecureRequests only because the test's issuer is http on
// loopback.
import * as oauth from 'oauth4webapi';
import { generateKeyPair, generateProof, calculateThumbprint } from 'dpop';
import { say, need, run } from './lib.mjs';

run(async () => {
  const issuer = need('ISSUER');
  const resource = need('RESOURCE');
  const keys = await generateKeyPair('ES256');
  const jkt = await calculateThumbprint(keys.publicKey);
  const mint = await fetch(`${issuer}/v1/auth-core/projects/${need('PROJECT')}/ai/agents`, {
    method: 'POST', headers: { authorization: `Bearer ${need('ADMIN_TOKEN')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agentName: 'dpop agent', scopes: ['files:read'], dpopJkt: jkt }),
  });
  if (mint.status !== 200) throw new Error('mint: ' + await mint.text());
  const secret = (await mint.json()).plaintext;

  const me = `${issuer}/v1/auth-core/ai/me`;
  const ask = (proof) => fetch(me, { headers: { authorization: `DPoP ${secret}`, ...(proof ? { dpop: proof } : {}) } });
  const bare = await ask();
  const nonce = bare.headers.get('dpop-nonce');
  const proof = await generateProof(keys, me, 'GET', nonce, secret);
  const proven = await ask(proof);
  const who = await proven.json();
  const replayed = await ask(proof);
  const thief = await generateKeyPair('ES256');
  const stolen = await ask(await generateProof(thief, me, 'GET', nonce, secret));

  // The exchange, and the call to the resource, with oauth4webapi's DPoP handle over the
  // same keys; the first token request meets the server's nonce and is retried once.
  const insecure = { [oauth.allowInsecureRequests]: true };
  const url = new URL(issuer);
  const as = await oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, insecure));
  const client = { client_id: 'agent' };
  const DPoP = oauth.DPoP(client, keys);
  const exchange = () => oauth.genericTokenEndpointRequest(as, client, oauth.None(), 'urn:ietf:params:oauth:grant-type:token-exchange', {
    subject_token: secret, subject_token_type: 'urn:ietf:params:oauth:token-type:access_token', resource, scope: 'files:read',
  }, { DPoP, ...insecure });
  let token;
  try {
    token = await oauth.processGenericTokenEndpointResponse(as, client, await exchange());
  } catch (err) {
    if (!oauth.isDPoPNonceError(err)) throw err;
    token = await oauth.processGenericTokenEndpointResponse(as, client, await exchange());
  }
  const call = await oauth.protectedResourceRequest(token.access_token, 'GET', new URL(resource + '/files'), undefined, undefined, { DPoP, ...insecure });

  say({ result: {
    jkt, bare: bare.status, challenge: bare.headers.get('www-authenticate'), proven: proven.status, agentName: who.agentName,
    replayed: replayed.status, stolen: stolen.status, tokenType: token.token_type, resource: call.status, body: await call.json(),
  } });
});
