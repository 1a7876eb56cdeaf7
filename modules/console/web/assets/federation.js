// Sign-in with identities people already have (SPEC §20): a tenant's provider buttons and
// the email code on the sign-in page, linked identities on Account, and a project's
// Sign-in methods screen.
import { api } from './api.js';
import { secondStep } from './mfa.js';
import { confirm, errorBox, field, h, select, submitting, table, when } from './ui.js';

// orSecondStep passes a sign-in answer on, through the second step when one is due (SPEC §17).
async function orSecondStep(got, email, show) {
  return got.mfaRequired ? secondStep(got, show, 'The mailed code was right.') : got;
}

// tenantOf is the tenant a sign-in page is for: ?tenant= (a project's end users), else
// the dashboard's.
export function tenantOf() {
  return new URLSearchParams(location.search).get('tenant') || '';
}

// methodsOf is the tenant's methods and providers, or the defaults when they cannot be read.
export async function methodsOf(tenant) {
  try {
    return await api('GET', `/v1/auth-core/providers${tenant ? `?tenantId=${encodeURIComponent(tenant)}` : ''}`);
  } catch {
    return { password: true, emailLink: false, providers: [] };
  }
}

// back is where a finished sign-in returns to: this console, for the same tenant.
function back(tenant) {
  // From an authorization request's page (SPEC §25), back to it once signed in upstream.
  if (location.pathname === '/console/authorize') return location.pathname + location.search;
  return tenant ? `/console?tenant=${encodeURIComponent(tenant)}` : '/console';
}

// toIdentityProvider sends the browser to the identity provider an address must sign in
// with (its domain's, SSO required), and says whether it did.
export async function toIdentityProvider(email, tenant) {
  const q = new URLSearchParams({ email, ...(tenant ? { tenantId: tenant } : {}) });
  const r = await fetch(`/v1/auth-core/providers/discover?${q}`, { credentials: 'same-origin', cache: 'no-store' });
  const got = r.ok ? await r.json().catch(() => null) : null;
  if (!got || !got.ssoRequired || !got.startUrl) return false;
  location.assign(`${got.startUrl}?redirect=${encodeURIComponent(back(tenant))}`);
  return true;
}

// providerButtons are the tenant's providers, each a button to its upstream.
export function providerButtons(got, tenant) {
  if (!got.providers.length) return '';
  return h('div', { class: 'providers', role: 'group', 'aria-label': 'Other ways to sign in' },
    got.providers.map((p) => h('button', {
      type: 'button',
      onclick: () => location.assign(`${p.startUrl}?redirect=${encodeURIComponent(back(tenant))}`),
    }, `Sign in with ${p.name}`)));
}

// emailView is sign-in by a mailed code (or the link in the same mail).
export function emailView(show, signedIn, tenant) {
  const box = errorBox();
  const sent = h('p', { role: 'status' });
  const email = field('Email', { type: 'email', autocomplete: 'email', required: true });
  const code = field('Code', { inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: '6', required: true });
  const body = (extra) => ({ email: email.querySelector('input').value, ...(tenant ? { tenantId: tenant } : {}), ...extra });
  const codeForm = h('form', {
    hidden: true,
    onsubmit: (e) => {
      e.preventDefault();
      submitting(codeForm, box, async () => signedIn(await orSecondStep(
        await api('POST', '/v1/auth-core/email/signin', body({ code: code.querySelector('input').value })), email.querySelector('input').value, show)));
    },
  }, code, h('button', { type: 'submit' }, 'Sign in with code'));
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        await api('POST', '/v1/auth-core/email/signin-request', body({}));
        sent.textContent = 'If you can sign in with this address, a mail with a code and a link is on its way. The code works for 10 minutes.';
        codeForm.hidden = false;
        code.querySelector('input').focus();
      });
    },
  }, email, h('button', { type: 'submit' }, 'Send code'));
  show('Sign in with an email code', form, sent, codeForm, box, h('p', {}, h('a', { href: `${back(tenant)}#/signin` }, 'Back to sign in')));
}

// linkLanding finishes a sign-in from a mailed link: the page posts the token (a mail
// scanner that only fetches the link spends nothing).
export async function linkLanding(token, show, signedIn) {
  show('Signing you in…');
  try {
    history.replaceState(null, '', '/console'); // the token leaves the address bar
    const got = await orSecondStep(await api('POST', '/v1/auth-core/email/signin', { token }), '', show);
    const t = got.user && got.user.tenantId; // and the tenant stays
    if (t && t !== 'public') history.replaceState(null, '', back(t));
    await signedIn(got);
  } catch (err) {
    const box = errorBox();
    box.show(err);
    show('This sign-in link cannot be used', box, h('p', {}, h('a', { href: '/console#/email' }, 'Get a new code')));
  }
}

// domainLanding is where a postmaster confirms a domain for single sign-on.
export async function domainLanding(token, show) {
  show('Confirming the domain…');
  try {
    const d = await api('POST', '/v1/auth-core/domains/verify', { token });
    history.replaceState(null, '', '/console');
    show('Domain confirmed', h('p', { role: 'status' }, `${d.domain} now signs in through its identity provider.`));
  } catch (err) {
    const box = errorBox();
    box.show(err);
    show('Domain not confirmed', box);
  }
}

// identitiesSection is Account's linked identities, with a way to link each provider of
// the user's tenant and to unlink (never the last way in: the server says so).
export async function identitiesSection(tenant) {
  const box = errorBox();
  const list = h('div', {});
  const links = h('div', {});
  const reload = async () => {
    try {
      const { identities } = await api('GET', '/v1/auth-core/identities');
      list.replaceChildren(table('Linked identities', ['Provider', 'Email', 'Linked', 'Last used', ''], identities, (i) => [
        i.providerName, i.email || h('span', { class: 'muted' }, 'none'), when(i.createdAt), when(i.lastUsedAt),
        h('button', {
          type: 'button', class: 'danger',
          onclick: async () => {
            if (!(await confirm(`Unlink ${i.providerName}? You will no longer sign in with it.`))) return;
            try { await api('DELETE', `/v1/auth-core/identities/${i.id}`); await reload(); } catch (err) { box.show(err); }
          },
        }, 'Unlink'),
      ]));
      const got = await methodsOf(tenant === 'public' ? '' : tenant);
      links.replaceChildren(...got.providers.map((p) => h('button', {
        type: 'button',
        onclick: async () => {
          try { location.assign((await api('POST', `/v1/auth-core/identities/link/${p.id}`, {})).redirectTo); } catch (err) { box.show(err); }
        },
      }, `Link ${p.name}`)));
    } catch (err) { box.show(err); }
  };
  await reload();
  return h('section', {}, h('h2', {}, 'Linked identities'), list, links, box);
}

// methodsView is a project's Sign-in methods screen (admins): password and email link,
// and its providers (added by issuer URL, client id and secret; the callback URL to
// register shown on each).
export async function methodsView(project, show) {
  const base = `/v1/projects/${project.id}/auth`;
  const box = errorBox();
  const listBox = errorBox();
  const list = h('div', {});
  const m = await api('GET', `${base}/methods`);
  const pw = h('input', { type: 'checkbox', id: 'm-password', checked: m.password });
  const mail = h('input', { type: 'checkbox', id: 'm-email', checked: m.emailLink });
  const saved = h('span', { role: 'status' });
  const methods = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(methods, box, async () => {
        await api('PUT', `${base}/methods`, { password: pw.checked, emailLink: mail.checked });
        saved.textContent = 'Saved.';
      });
    },
  }, h('div', { class: 'check' }, pw, h('label', { for: 'm-password' }, 'Password')),
  h('div', { class: 'check' }, mail, h('label', { for: 'm-email' }, 'Email link')),
  h('button', { type: 'submit' }, 'Save methods'), saved);
  const reload = async () => {
    try {
      const { providers } = await api('GET', `${base}/providers`);
      list.replaceChildren(table('Providers', ['Name', 'Issuer or endpoint', 'Callback URL', 'Domains', ''], providers, (p) => [
        p.name, h('code', {}, p.issuer || p.authorizationEndpoint), h('code', { 'data-callback': p.id }, p.callbackUrl),
        p.domains.map((d) => `${d.domain}${d.verified ? '' : ' (unproven)'}`).join(', ') || h('span', { class: 'muted' }, 'none'),
        h('button', {
          type: 'button', class: 'danger',
          onclick: async () => {
            if (!(await confirm(`Remove ${p.name}? People who sign in only with it lose that way in.`))) return;
            try { await api('DELETE', `${base}/providers/${p.id}`); await reload(); } catch (err) { listBox.show(err); }
          },
        }, 'Remove'),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const addBox = errorBox();
  const kind = select('Provider type', [
    { value: 'oidc', label: 'OpenID Connect (issuer URL)', selected: true },
    { value: 'google', label: 'Google' }, { value: 'microsoft', label: 'Microsoft' }, { value: 'github', label: 'GitHub' },
    { value: 'gitlab', label: 'GitLab' }, { value: 'apple', label: 'Apple' },
  ]);
  const name = field('Provider name', { maxlength: '80', placeholder: 'Acme SSO' });
  const issuer = field('Issuer URL', { type: 'url', placeholder: 'https://login.example.com' });
  const clientId = field('Client ID', { required: true, autocomplete: 'off' });
  const clientSecret = field('Client secret', { type: 'password', required: true, autocomplete: 'off' });
  const trust = h('input', { type: 'checkbox', id: 'p-trust' });
  const added = h('p', { role: 'status' });
  const add = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(add, addBox, async () => {
        const k = kind.querySelector('select').value;
        const body = { clientId: clientId.querySelector('input').value, clientSecret: clientSecret.querySelector('input').value };
        if (k === 'oidc') Object.assign(body, { type: 'oidc', issuer: issuer.querySelector('input').value, trustEmail: trust.checked });
        else body.preset = k;
        if (name.querySelector('input').value) body.name = name.querySelector('input').value;
        const p = await api('POST', `${base}/providers`, body);
        add.reset();
        added.textContent = `Added ${p.name}. Register this redirect URI with it: ${p.callbackUrl}`;
        await reload();
      });
    },
  }, kind, name, issuer, clientId, clientSecret,
  h('div', { class: 'check' }, trust, h('label', { for: 'p-trust' }, 'Trust its verified email addresses')),
  addBox, h('button', { type: 'submit' }, 'Add provider'));
  show('Sign-in methods', h('p', { class: 'muted' }, `How end users of ${project.name} sign in. Their sign-in page: `,
    h('a', { href: `/console?tenant=${encodeURIComponent(project.id)}` }, `/console?tenant=${project.id}`)),
  methods, box, h('h2', {}, 'Providers'), listBox, list, h('h2', {}, 'Add a provider'), add, added);
  await reload();
}
