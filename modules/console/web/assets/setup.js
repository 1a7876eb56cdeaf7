// The self-serve setup page (SPEC §26): a project admin sent an organization's IT admin a
// link; it opens here once, for an hour, with no account. The IT admin proves the org's
// domains, connects its identity provider (OIDC or SAML) and tests it, turns its policy on
// and creates its SCIM directories — only what the link's intents cover, and only for that org.
import { APIError } from './api.js';
import { directorySection, samlSection, watchTest } from './enterprise.js';
import { errorBox, field, h, select, submitting, table, when } from './ui.js';

// The setup session's token lives in this tab only: a reload within the hour keeps it, a
// new tab or browser must be sent a new link.
const storeKey = 'authcore.setup';

// call is api() for the setup session: its token as a bearer, never a cookie.
async function call(setup, method, path, body) {
  const init = { method, cache: 'no-store', credentials: 'omit', headers: { Accept: 'application/json', Authorization: `Bearer ${setup.setupToken}` } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const data = await r.json().catch(() => null);
  if (!r.ok) throw new APIError(r.status, data);
  return data;
}

export async function setupLanding(show) {
  const box = errorBox();
  const secret = location.hash.slice(1);
  history.replaceState(null, '', location.pathname); // the secret leaves the address bar at once
  let setup = null;
  if (secret.startsWith('ac_stl_')) {
    try {
      setup = await fetch('/v1/auth-core/orgs/setup/open', {
        method: 'POST', cache: 'no-store', credentials: 'omit',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify({ token: secret }),
      }).then(async (r) => {
        const data = await r.json().catch(() => null);
        if (!r.ok) throw new APIError(r.status, data);
        return data;
      });
      sessionStorage.setItem(storeKey, JSON.stringify(setup));
    } catch (err) {
      box.show(err);
      show('Set up your organization', h('p', {}, 'This setup link cannot be used: it opens once, within five minutes. Ask for a new one.'), box);
      return;
    }
  } else {
    setup = JSON.parse(sessionStorage.getItem(storeKey) || 'null');
  }
  if (!setup || Date.parse(setup.expiresAt) <= Date.now()) {
    sessionStorage.removeItem(storeKey);
    show('Set up your organization', h('p', {}, 'This setup session has ended. Ask for a new setup link.'));
    return;
  }
  const base = `/v1/auth-core/orgs/${encodeURIComponent(setup.org.id)}`;
  const sections = [];
  if (setup.intents.includes('domains')) sections.push(await domainsSection(setup, base));
  if (setup.intents.includes('sso')) sections.push(await ssoSection(setup, base));
  if (setup.intents.includes('directory')) sections.push(await directorySection((...a) => call(setup, ...a), base));
  if (setup.intents.includes('audit')) sections.push(h('section', {}, h('h2', {}, 'Audit streams'), h('p', { class: 'muted' }, 'Not available yet on this server.')));
  show(`Set up ${setup.org.name}`,
    h('p', {}, 'You are setting up ', h('strong', {}, setup.org.name), ' until ', when(setup.expiresAt), '. Nothing here reaches any other organization.'),
    ...sections);
}

async function domainsSection(setup, base) {
  const box = errorBox();
  const list = h('div', {});
  const load = async () => {
    const { domains } = await call(setup, 'GET', `${base}/domains`);
    list.replaceChildren(table('Domains', ['Domain', 'Status', 'Proof', ''], domains, (d) => [
      h('strong', {}, d.domain), d.status,
      d.status === 'verified' ? when(d.verifiedAt) : (d.method === 'dns'
        ? h('span', {}, 'TXT ', h('code', { 'aria-label': `DNS name for ${d.domain}` }, d.dnsRecord.name), ' = ', h('code', { 'aria-label': `DNS value for ${d.domain}` }, d.dnsRecord.value))
        : 'a code mailed to the address given'),
      d.status === 'verified' ? '' : verifyForm(setup, base, d, box, load),
    ]));
  };
  const domain = field('Domain', { required: true, placeholder: 'example.com' });
  const method = select('Proof', [{ value: 'dns', label: 'DNS TXT record' }, { value: 'email', label: 'Code mailed to admin@, postmaster@, hostmaster@ or webmaster@' }]);
  const email = field('Address for the code (email proof)', { type: 'email' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const m = method.querySelector('select').value;
        const body = { domain: domain.querySelector('input').value.trim().toLowerCase(), method: m };
        if (m === 'email') body.email = email.querySelector('input').value.trim();
        await call(setup, 'POST', `${base}/domains`, body);
        form.reset();
        await load();
      });
    },
  }, domain, method, email, h('button', { type: 'submit' }, 'Add domain'));
  await load().catch((err) => box.show(err));
  return h('section', {}, h('h2', {}, 'Domains'),
    h('p', { class: 'muted' }, 'Prove each domain your people use. Then addresses there sign in the way your policy says.'), list, form, box);
}

function verifyForm(setup, base, d, box, load) {
  const code = d.method === 'email' ? field(`Code for ${d.domain}`, { autocomplete: 'one-time-code', inputmode: 'numeric' }) : '';
  const form = h('form', {
    class: 'inline',
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = code ? { code: code.querySelector('input').value.trim() } : {};
        await call(setup, 'POST', `${base}/domains/${encodeURIComponent(d.domain)}/verify`, body);
        await load();
      });
    },
  }, code, h('button', { type: 'submit' }, `Verify ${d.domain}`));
  return form;
}

async function ssoSection(setup, base) {
  const box = errorBox();
  const list = h('div', {});
  const result = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const { connections } = await call(setup, 'GET', `${base}/connections`);
    list.replaceChildren(table('Connections', ['Name', 'Issuer', 'Sign-in address', ''], connections.filter((p) => p.type !== 'saml'), (p) => [
      h('strong', {}, p.name), h('code', {}, p.issuer || ''), h('code', { 'aria-label': `Redirect URI of ${p.name}` }, p.callbackUrl),
      h('button', {
        type: 'button',
        onclick: () => submitting(form, box, async () => {
          const test = await call(setup, 'POST', `${base}/connections/${encodeURIComponent(p.id)}/test`);
          result.replaceChildren(h('p', {}, 'Sign in once in the window that opens (or at ', h('a', { href: test.url, target: '_blank', rel: 'noopener' }, 'this address'),
            '); the attributes it maps appear here.'));
          window.open(test.url, '_blank', 'noopener');
          watchTest((...a) => call(setup, ...a), `${base}/connections/${encodeURIComponent(p.id)}/test/${encodeURIComponent(test.testId)}`, result);
        }),
      }, `Test ${p.name}`),
    ]));
  };
  const name = field('Connection name', { required: true, placeholder: 'Okta' });
  const issuer = field('Issuer URL', { required: true, type: 'url', placeholder: 'https://idp.example.com' });
  const clientId = field('Client ID', { required: true, autocomplete: 'off' });
  const clientSecret = field('Client secret', { type: 'password', autocomplete: 'off' });
  // Your own identity provider vouches for your people's addresses: on by default.
  const trust = h('label', {}, h('input', { type: 'checkbox', checked: true, 'aria-label': 'Trust the addresses it says are verified' }), ' Trust the addresses it says are verified');
  const value = (f) => f.querySelector('input').value.trim();
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = { type: 'oidc', name: value(name), issuer: value(issuer), clientId: value(clientId), trustEmail: trust.querySelector('input').checked };
        if (value(clientSecret)) body.clientSecret = value(clientSecret);
        const created = await call(setup, 'POST', `${base}/connections`, body);
        form.reset();
        result.replaceChildren(h('p', { role: 'status' }, 'Connection added. Register this redirect URI at your identity provider: ',
          h('code', { 'aria-label': 'Redirect URI to register' }, created.callbackUrl)));
        await load();
      });
    },
  }, name, issuer, clientId, clientSecret, trust, h('button', { type: 'submit' }, 'Add OIDC connection'));

  const policyBox = errorBox();
  const saved = h('p', { role: 'status' });
  const policy = await call(setup, 'GET', `${base}/policy`).catch((err) => { policyBox.show(err); return null; });
  const check = (label, on) => h('label', {}, h('input', { type: 'checkbox', checked: on ? true : undefined, 'aria-label': label }), ' ', label);
  const sso = check('Require SSO for our domains', policy && policy.ssoRequired);
  const mfa = check('Require a second factor', policy && policy.mfaRequired);
  const hours = field('Longest session, hours (0: the project default)', { type: 'number', min: 0, max: 720, value: String(policy ? policy.sessionMaxHours : 0) });
  const joined = policy && policy.autoJoin ? policy.autoJoin.role : '';
  const join = select('People who sign in with our domains join as', ['', 'member', 'admin'].map((r) => ({
    value: r, label: r || 'nobody joins by themselves', selected: r === joined,
  })));
  const policyForm = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(policyForm, policyBox, async () => {
        const role = join.querySelector('select').value;
        await call(setup, 'PUT', `${base}/policy`, {
          autoJoin: role ? { role } : null,
          ssoRequired: sso.querySelector('input').checked,
          mfaRequired: mfa.querySelector('input').checked,
          sessionMaxHours: Number(hours.querySelector('input').value || 0),
          revokeMintedOnDeprovision: policy ? !!policy.revokeMintedOnDeprovision : false,
        });
        saved.textContent = 'Policy saved.';
      });
    },
  }, sso, mfa, hours, join, h('button', { type: 'submit' }, 'Save policy'));
  await load().catch((err) => box.show(err));
  const saml = await samlSection((...a) => call(setup, ...a), base);
  return h('section', {}, h('h2', {}, 'Single sign-on'), h('h3', {}, 'OpenID Connect'), list, form, result, box, saml,
    h('h3', {}, 'Policy'), policyForm, saved, policyBox);
}
