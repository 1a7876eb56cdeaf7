// The JSON API, from the same origin with the session cookies. An access token that ran
// out is refreshed silently (and ahead of time, when its expiry is known), once per burst
// of requests; when that fails the page goes back to sign-in.

export class APIError extends Error {
  constructor(status, body) {
    super((body && body.message) || `The server answered ${status}.`);
    this.status = status;
    this.code = body && body.code;
    this.issues = body && body.issues;
  }
}

let refreshing = null;
let timer = null;
let onSignedOut = () => {};
let onReauthenticate = async () => false;

export function whenSignedOut(fn) { onSignedOut = fn; }

// whenReauthenticationNeeded sets what runs when the server asks for a recent
// authentication (403 reauthentication_required, SPEC §17): it resolves true once the
// person stepped up, and the request is sent again.
export function whenReauthenticationNeeded(fn) { onReauthenticate = fn; }

// schedule refreshes the session a minute before its access token expires.
export function schedule(expiresAt) {
  clearTimeout(timer);
  if (!expiresAt) return;
  const wait = new Date(expiresAt).getTime() - Date.now() - 60_000;
  timer = setTimeout(() => { refresh().catch(() => {}); }, Math.max(wait, 5_000));
}

// refresh rotates the session's refresh token. The request is keepalive: a page left
// mid-refresh would otherwise drop the answer after the server rotated the token, its new
// cookie would never be stored, and the next page's refresh, presenting the old token,
// would end the session as theft (SPEC §2 has no grace for session refresh).
export function refresh() {
  if (!refreshing) {
    refreshing = fetch('/v1/auth-core/session/refresh', { method: 'POST', credentials: 'same-origin', keepalive: true })
      .then(async (r) => {
        if (!r.ok) throw new APIError(r.status, await r.json().catch(() => null));
        const body = await r.json();
        schedule(body.session && body.session.accessTokenExpiresAt);
        return body;
      })
      .finally(() => { refreshing = null; });
  }
  return refreshing;
}

// Raw is a request body sent as it is, with its own media type (a JSON Lines import),
// rather than as JSON: api still refreshes and steps up for it.
export class Raw {
  constructor(type, text) {
    this.type = type;
    this.text = text;
  }
}

// api sends one request; body, when given, is sent as JSON, or as it is when a Raw.
export async function api(method, path, body, retried = false, steppedUp = false) {
  const init = { method, credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } };
  if (body instanceof Raw) {
    init.headers['Content-Type'] = body.type;
    init.body = body.text;
  } else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const data = await r.json().catch(() => null);
  if (r.status === 401 && !retried && !path.includes('/signin') && !path.includes('/signup')) {
    try {
      await refresh();
    } catch {
      clearTimeout(timer);
      onSignedOut();
      throw new APIError(401, data);
    }
    return api(method, path, body, true, steppedUp);
  }
  if (r.status === 403 && data && data.code === 'reauthentication_required' && !steppedUp) {
    if (await onReauthenticate()) return api(method, path, body, true, true);
  }
  if (!r.ok) throw new APIError(r.status, data);
  return data;
}

export function stop() { clearTimeout(timer); }
