import { api, refresh, schedule, stop, whenReauthenticationNeeded, whenSignedOut } from './api.js';
import { factorsSection, passkeySignIn, secondStep, stepUp } from './mfa.js';
import { confirm, errorBox, field, h, secretPanel, select, submitting, table, when } from './ui.js';
import { chart, mini } from './chart.js';
import { approvalsView, typesView } from './approvals.js';
import { connectionsView } from './connections.js';
import { domainLanding, emailView, identitiesSection, linkLanding, methodsOf, methodsView, providerButtons, tenantOf, toIdentityProvider } from './federation.js';
import { trustView } from './trust.js';
import { auditStreamsView } from './auditstreams.js';
import { projectAppsView } from './projectapps.js';
import { usersView } from './users.js';
import { orgsView } from './orgs.js';
import { deviceView } from './device.js';
import { setupLanding } from './setup.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const banner = document.getElementById('banner');

// tenant is the sign-in page's tenant (?tenant=, a project's end users); tenantUser is set
// when the signed-in user is not a dashboard user: they see their Account only. screens are
// the credential kinds' console screens (GET /v1/console/screens).
const state = { user: null, projects: [], project: localStorage.getItem('authcore.project') || '', tenant: tenantOf(), tenantUser: false, screens: [] };

// arrivedAt is the address's fragment as the page was opened: a mailed link to an approval
// (SPEC §23) lands on #/approvals?request=…, which the sign-in in between replaces.
const arrivedAt = location.hash;

// A session that ends sends its user to sign in once: a 401 answered while nobody was
// signed in (start asking who is, or a second request of the same ended session) draws
// nothing, since a form drawn again empties what was typed into it.
whenSignedOut(() => {
  const was = state.user;
  state.user = null;
  if (was) go('#/signin');
});

whenReauthenticationNeeded(() => stepUp(state.user));

// ---- shell ----------------------------------------------------------------------------

function show(title, ...content) {
  document.title = `${title} · authcore console`;
  // Views pass lists of parts as h() takes them; replaceChildren would print a list as
  // "[object HTMLUListElement],…", so they are flattened as h() flattens its children.
  main.replaceChildren(h('h1', {}, title), ...content.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  main.focus();
}

// showFor is show for render number gen: once a newer render began, what an older one
// finishes loading is not drawn over it.
function showFor(gen) {
  return (...content) => { if (gen === latest) show(...content); };
}

// go moves to route and renders it once: through the hashchange listener when the
// address changes, directly when it was there already (which fires no hashchange).
function go(route) {
  if (location.hash === route) return render();
  location.hash = route;
  return undefined;
}

function current() { return state.projects.find((p) => p.id === state.project); }

function drawNav() {
  nav.hidden = !state.user;
  if (!state.user) { nav.replaceChildren(); return; }
  const route = location.hash.split('?')[0] || '#/projects';
  const link = (href, text) => h('a', { href, 'aria-current': route === href ? 'page' : null }, text);
  const picker = state.projects.length > 0 && select('Project', state.projects.map((p) => ({ value: p.id, label: p.name, selected: p.id === state.project })), {
    onchange: (e) => { choose(e.target.value); render(); },
  });
  if (state.tenantUser) {
    nav.replaceChildren(link('#/approvals', 'Approvals'), link('#/connections', 'Connected accounts'), link('#/account', 'Account'),
      h('button', { type: 'button', onclick: signOut }, 'Sign out'));
    return;
  }
  nav.replaceChildren(
    link('#/projects', 'Projects'),
    link('#/agents', 'Agent tokens'),
    link('#/badges', 'Service badges'),
    ...state.screens.map((s) => link(`#/kind/${s.kind}`, s.title)),
    link('#/sessions', 'Sessions'),
    link('#/members', 'Members'),
    link('#/audit', 'Audit'),
    link('#/audit-streams', 'Audit streams'),
    link('#/webhooks', 'Webhooks'),
    link('#/resources', 'Resources'),
    link('#/approval-types', 'Approval types'),
    link('#/users', 'Users'),
    link('#/orgs', 'Organizations'),
    link('#/project-apps', 'Apps'),
    link('#/apps', 'Connected apps'),
    link('#/usage', 'Usage'),
    link('#/signin-methods', 'Sign-in methods'),
    link('#/trust', 'Trust'),
    link('#/account', 'Account'),
    picker || '',
    h('button', { type: 'button', onclick: signOut }, 'Sign out'),
  );
}

function drawBanner() {
  banner.replaceChildren();
  if (!state.user || state.user.emailVerified) return;
  const box = errorBox();
  const sent = h('span', { role: 'status' });
  banner.append(h('div', { class: 'banner' },
    h('span', {}, `Your email address ${state.user.email || ''} is not verified yet.`),
    h('button', {
      type: 'button',
      onclick: async () => {
        try {
          await api('POST', '/v1/auth-core/email/verify-request', {});
          sent.textContent = 'Sent: follow the link in the mail.';
        } catch (err) { box.show(err); }
      },
    }, 'Send verification mail'), sent, box));
}

function choose(id) {
  state.project = id;
  localStorage.setItem('authcore.project', id);
}

async function loadProjects() {
  const { projects } = await api('GET', '/v1/projects');
  state.projects = projects;
  if (!current() && projects.length > 0) choose(projects[0].id);
}

async function loadUser() {
  try {
    const me = await api('GET', '/v1/auth-core/session/me');
    state.user = me.user;
    state.user.tenantId = me.accessTokenPayload && me.accessTokenPayload.tid;
    state.user.orgId = (me.accessTokenPayload && me.accessTokenPayload.org_id) || '';
    // The access token says when it ends: the refresh is timed from that, rather than by
    // refreshing on every page load, which rotated the refresh token each time.
    schedule(me.accessTokenPayload && me.accessTokenPayload.exp && me.accessTokenPayload.exp * 1000);
    state.tenantUser = state.user.tenantId !== 'public';
    if (state.tenantUser) state.tenant = state.user.tenantId;
    if (!state.tenantUser) {
      await loadProjects();
      await loadScreens();
    }
  } catch {
    state.user = null;
  }
}

// loadScreens learns the screens the credential kinds contribute (SPEC §15), as the badge
// screen learns products: a kind added as a module is on the console with no change here.
async function loadScreens() {
  try {
    state.screens = (await api('GET', '/v1/console/screens')).screens;
  } catch {
    state.screens = [];
  }
}

async function signOut() {
  try { await api('POST', '/v1/auth-core/signout'); } catch { /* signed out either way */ }
  stop();
  state.user = null;
  state.projects = [];
  go('#/signin');
}

// ---- sign-up, sign-in, recovery --------------------------------------------------------

async function authForm(mode, why, hint) {
  const tenant = state.tenant;
  const gen = latest;
  const methods = await methodsOf(tenant);
  if (gen !== latest) return; // a newer render replaced this one: what is typed there stays
  const box = errorBox();
  const email = field('Email', { type: 'email', autocomplete: 'email', required: true, value: hint || undefined });
  const password = field('Password', { type: 'password', autocomplete: mode === 'signup' ? 'new-password' : 'current-password', required: true });
  const label = mode === 'signup' ? 'Sign up' : 'Sign in';
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = { email: email.querySelector('input').value, password: password.querySelector('input').value };
        if (tenant) body.tenantId = tenant;
        // Home-realm discovery (SPEC §20, §26): an address whose organization requires its
        // identity provider goes there, and its password is never sent.
        if (mode === 'signin' && await toIdentityProvider(body.email, tenant)) return;
        let got = await api('POST', `/v1/auth-core/${mode}`, body);
        if (got.mfaRequired) got = await secondStep(got, show);
        await signedIn(got);
      });
    },
  }, email, password, box, h('button', { type: 'submit' }, label),
  mode === 'signin' ? h('button', {
    type: 'button',
    onclick: () => submitting(form, box, async () => signedIn(await passkeySignIn(tenant))),
  }, 'Sign in with a passkey') : '');
  const other = mode === 'signup'
    ? h('p', {}, 'Have an account? ', h('a', { href: '#/signin' }, 'Sign in instead'))
    : h('p', {}, 'New here? ', h('a', { href: '#/signup' }, 'Create an account'), ' · ', h('a', { href: '#/forgot' }, 'Forgot password?'));
  // SPEC §20: the tenant's providers and the email code beside (or instead of) the password.
  const byEmail = methods.emailLink ? h('p', {}, h('a', { href: '#/email' }, 'Sign in with an email code')) : '';
  show(label, why ? h('p', {}, why) : '', ...(methods.password ? [form, other] : [box]), providerButtons(methods, tenant), byEmail);
}

async function signedIn(got) {
  schedule(got.session && got.session.accessTokenExpiresAt);
  state.user = got.user;
  state.tenantUser = got.user.tenantId !== 'public';
  if (state.tenantUser) { // their sign-in page, when they sign out, is their tenant's
    state.tenant = got.user.tenantId;
    if (location.pathname === consentPage || location.pathname === devicePage) { render(); return; } // an app of their project asked (SPEC §25)
    // A mailed link to an approval (SPEC §23) is where they were going.
    go(arrivedAt.startsWith('#/approvals') ? arrivedAt : '#/account');
    return;
  }
  await loadProjects();
  await loadScreens();
  if (location.pathname === consentPage || location.pathname === invitePage || location.pathname === devicePage) { render(); return; } // back to the question asked
  go(state.projects.length ? '#/agents' : '#/projects');
}

function forgotForm() {
  const box = errorBox();
  const done = h('p', { role: 'status' });
  const email = field('Email', { type: 'email', autocomplete: 'email', required: true });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        await api('POST', '/v1/auth-core/password/reset-request', { email: email.querySelector('input').value });
        done.textContent = 'If an account has this address, a mail with a reset link is on its way.';
      });
    },
  }, email, box, h('button', { type: 'submit' }, 'Send reset link'));
  show('Forgot password', form, done, h('p', {}, h('a', { href: '#/signin' }, 'Back to sign in')));
}

function resetForm(token) {
  const box = errorBox();
  const password = field('New password', { type: 'password', autocomplete: 'new-password', required: true });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        await api('POST', '/v1/auth-core/password/reset', { token, password: password.querySelector('input').value });
        history.replaceState(null, '', '/console#/password-changed'); // the token leaves the address bar
        show('Password changed', h('p', { role: 'status' }, 'Your password is changed and your other sessions are signed out.'),
          h('p', {}, h('a', { href: '#/signin' }, 'Sign in')));
      });
    },
  }, password, box, h('button', { type: 'submit' }, 'Set password'));
  show('Choose a new password', form);
}

async function verifyEmail(token) {
  show('Verifying your email address…');
  try {
    const got = await api('POST', '/v1/auth-core/email/verify', { token });
    history.replaceState(null, '', '/console#/projects');
    if (got.credentialsRemoved) {
      // Proven without the account's own session: whoever set its password may not have
      // been the address's owner, so the server removed it and signed every session out.
      show('Email verified', h('p', { role: 'status' }, 'Your address is verified. The password and sessions set before it was proven were removed: choose a password with “Forgot password”.'),
        h('p', {}, h('a', { href: '/console' }, 'Sign in')));
      return;
    }
    if (state.user) state.user.emailVerified = true;
    drawBanner();
    show('Email verified', h('p', { role: 'status' }, 'Thank you: your address is verified.'), h('p', {}, h('a', { href: '#/projects' }, 'Continue')));
  } catch (err) {
    const box = errorBox();
    box.show(err);
    show('Email not verified', box);
  }
}

// ---- projects --------------------------------------------------------------------------

function projectsView() {
  const box = errorBox();
  const name = field('Project name', { required: true, maxlength: 80 });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      const gen = latest;
      submitting(form, box, async () => {
        const p = await api('POST', '/v1/projects', { name: name.querySelector('input').value });
        choose(p.id);
        await loadProjects();
        if (gen === latest) render(); // the new project on this screen
        else drawNav(); // the user moved on meanwhile: only the picker learns of it
      });
    },
  }, name, box, h('button', { type: 'submit' }, 'Create project'));
  show('Projects',
    current() && current().role === 'admin' ? policyForm() : '',
    table('Projects', ['Name', 'Your role', 'Created', ''], state.projects, (p) => [
      p.id === state.project ? h('strong', {}, p.name, ' (current)') : p.name,
      p.role,
      when(p.createdAt),
      p.id === state.project ? '' : h('button', { type: 'button', onclick: () => { choose(p.id); location.hash = '#/agents'; } }, `Switch to ${p.name}`),
    ]),
    h('h2', {}, 'New project'), form);
}

// policyForm edits the current project's policy (SPEC §12); empty fields mean no limit.
function policyForm() {
  const box = errorBox();
  const done = h('p', { role: 'status' });
  const ttl = field('Max agent-token TTL hours', { type: 'number', min: 1, max: 8760, step: 1, placeholder: 'no limit' });
  const days = field('Max badge lifetime days', { type: 'number', min: 1, max: 365, step: 1, placeholder: 'no limit' });
  const scopes = field('Allowed scopes', { placeholder: 'any scope (e.g. files:* tickets:read)' });
  const input = (f) => f.querySelector('input');
  api('GET', `/v1/projects/${state.project}/policy`).then((p) => {
    if (p.agentTokenMaxTtlHours) input(ttl).value = p.agentTokenMaxTtlHours;
    if (p.badgeMaxExpiresInDays) input(days).value = p.badgeMaxExpiresInDays;
    if (p.allowedScopes) input(scopes).value = p.allowedScopes.join(' ');
  }).catch((err) => box.show(err));
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const num = (f) => (input(f).value ? Number(input(f).value) : null);
        const list = input(scopes).value.split(/[\s,]+/).filter(Boolean);
        await api('PUT', `/v1/projects/${state.project}/policy`, {
          agentTokenMaxTtlHours: num(ttl), badgeMaxExpiresInDays: num(days), allowedScopes: list.length ? list : null,
        });
        done.textContent = 'Policy saved.';
      });
    },
  }, ttl, days, scopes, box, h('button', { type: 'submit' }, 'Save policy'));
  return h('section', { 'aria-label': 'Policy' }, h('h2', {}, `Policy of ${current().name}`), form, done);
}

function needProject() {
  if (current()) return false;
  show('No project yet', h('p', {}, 'Create a project first: ', h('a', { href: '#/projects' }, 'Projects')));
  return true;
}

// policyNote shows the project's limits (SPEC §12), when it has any.
async function policyNote() {
  const el = h('p', { class: 'muted' });
  try {
    const p = await api('GET', `/v1/projects/${state.project}/policy`);
    const parts = [];
    if (p.agentTokenMaxTtlHours) parts.push(`agent tokens live at most ${p.agentTokenMaxTtlHours} hours`);
    if (p.badgeMaxExpiresInDays) parts.push(`badges live at most ${p.badgeMaxExpiresInDays} days`);
    if (p.allowedScopes) parts.push(`scopes allowed: ${p.allowedScopes.join(', ') || 'none'}`);
    el.textContent = parts.length ? `Project policy: ${parts.join('; ')}.` : 'Project policy: no limits.';
  } catch { el.hidden = true; }
  return el;
}

// ---- agent tokens ----------------------------------------------------------------------

async function agentsView() {
  if (needProject()) return;
  const gen = latest;
  const base = `/v1/auth-core/projects/${state.project}/ai/agents`;
  const listBox = errorBox();
  const list = h('div', {});
  const shown = h('div', {});
  const reload = async () => {
    try {
      const { agents } = await api('GET', base);
      list.replaceChildren(table('Agent tokens', ['Agent', 'Scopes', 'Created', 'Expires', 'Last used', 'Last 24 h', ''], agents, (a) => [
        h('span', {}, a.agentName, h('br', {}), h('code', { class: 'muted' }, a.tokenHint),
          a.dpopJkt ? h('span', { class: 'muted', title: `DPoP key ${a.dpopJkt}` }, ' · key-bound') : ''),
        a.scopes.join(' ') || h('span', { class: 'muted' }, 'none'),
        when(a.createdAt), when(a.expiresAt), when(a.lastUsedAt), usageCell(a.id, a.agentName, a.usage24h),
        h('span', { class: 'row' },
          h('button', {
            type: 'button',
            onclick: async () => {
              try {
                const got = await api('POST', `${base}/${a.id}/roll`, { graceHours: 24 });
                shown.replaceChildren(secretPanel(`New token for ${got.agent.agentName}`, [['Token', got.plaintext]]),
                  h('p', {}, 'The previous token keeps working until ', when(got.previousSecretExpiresAt), '.'));
                await reload();
              } catch (err) { listBox.show(err); }
            },
          }, 'Roll'),
          h('button', {
            type: 'button', class: 'danger',
            onclick: async () => {
              if (!(await confirm(`Revoke the token of ${a.agentName}? Agents using it stop at once.`))) return;
              try { await api('DELETE', `${base}/${a.id}`); await reload(); } catch (err) { listBox.show(err); }
            },
          }, 'Revoke')),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const box = errorBox();
  const name = field('Agent name', { required: true, maxlength: 100 });
  const scopes = field('Scopes', { placeholder: 'files:read tickets:*' });
  const ttl = field('TTL hours', { type: 'number', min: 1, max: 8760, step: 'any', value: 720 });
  const jkt = field('Bind to DPoP key (thumbprint)', { pattern: '[A-Za-z0-9_-]{43}', placeholder: 'optional: the RFC 7638 thumbprint of the agent\'s key' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = {
          agentName: name.querySelector('input').value,
          scopes: scopes.querySelector('input').value.split(/[\s,]+/).filter(Boolean),
        };
        const hours = ttl.querySelector('input').value;
        if (hours) body.ttlHours = Number(hours); // empty: the server's default, within the policy
        const key = jkt.querySelector('input').value.trim();
        if (key) body.dpopJkt = key; // then the token works only with proofs by that key
        const got = await api('POST', base, body);
        shown.replaceChildren(secretPanel(`Token for ${got.agent.agentName}`, [['Token', got.plaintext]]));
        form.reset();
        await reload();
      });
    },
  }, name, scopes, ttl, jkt, box, h('button', { type: 'submit' }, 'Mint token'));
  const note = await policyNote();
  if (gen !== latest) return; // the user moved on while this screen loaded
  show('Agent tokens', note, h('h2', {}, 'Mint a token'), form, shown, listBox, list);
  await reload();
}

// ---- service badges --------------------------------------------------------------------

// labelOf turns a JSON field name into a label: accessKeyId → "Access key id".
function labelOf(name) {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

async function badgesView() {
  if (needProject()) return;
  const gen = latest;
  const base = `/v1/projects/${state.project}/service-badges`;
  const { products } = await api('GET', '/v1/service-badges/products');
  const listBox = errorBox();
  const list = h('div', {});
  const shown = h('div', {});
  // showBadge shows a create or roll answer's secrets once: the badge secret, then every
  // field of whatever the product's Mint returned (the answer's field named after the
  // product), labelled from its name, so a new product needs nothing here.
  const showBadge = (got, title) => {
    const secrets = [['Badge secret', got.plaintext]];
    const own = got[got.badge.product];
    if (own && typeof own === 'object') {
      for (const [k, v] of Object.entries(own)) {
        if (v !== null && v !== undefined) secrets.push([labelOf(k), typeof v === 'string' ? v : JSON.stringify(v)]);
      }
    }
    shown.replaceChildren(secretPanel(title, secrets));
  };
  const filter = select('Filter by product', [{ value: '', label: 'All products' }, ...products.filter((p) => p.mintable).map((p) => ({ value: p.key, label: p.key }))], {
    onchange: () => reload(),
  });
  const reload = async () => {
    try {
      const q = filter.querySelector('select').value;
      const { badges } = await api('GET', q ? `${base}?product=${encodeURIComponent(q)}` : base);
      list.replaceChildren(table('Service badges', ['Name', 'Product', 'Role', 'Created', 'Expires', 'Last used', 'Last 24 h', ''], badges, (b) => [
        h('span', {}, b.name, h('br', {}), h('code', { class: 'muted' }, b.secretHint)),
        b.product, b.role, when(b.createdAt), when(b.expiresAt), when(b.lastUsedAt), usageCell(b.id, b.name, b.usage24h),
        h('span', { class: 'row' },
          h('button', {
            type: 'button',
            onclick: async () => {
              try {
                const got = await api('POST', `${base}/${b.id}/roll`, { graceHours: 24 });
                showBadge(got, `New secrets for ${got.badge.name} (${got.badge.product})`);
                shown.append(h('p', {}, 'The previous secrets keep working until ', when(got.previousSecretExpiresAt), '.'));
                await reload();
              } catch (err) { listBox.show(err); }
            },
          }, 'Roll'),
          h('button', {
            type: 'button', class: 'danger',
            onclick: async () => {
              if (!(await confirm(`Revoke the ${b.product} badge ${b.name}? Whatever uses it stops at once.`))) return;
              try { await api('DELETE', `${base}/${b.id}`); await reload(); } catch (err) { listBox.show(err); }
            },
          }, 'Revoke')),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const box = errorBox();
  const name = field('Badge name', { required: true, maxlength: 80 });
  const product = select('Product', products.map((p) => ({
    value: p.key, disabled: !p.mintable, label: p.mintable ? `${p.key} — ${p.description}` : `${p.key} — not available: ${p.reason}`,
  })));
  const role = select('Role', ['viewer', 'developer', 'admin'].map((r) => ({ value: r, label: r })));
  const days = field('Expires in days', { type: 'number', min: 1, max: 365, step: 1, placeholder: 'never' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = { name: name.querySelector('input').value, product: product.querySelector('select').value, role: role.querySelector('select').value };
        const d = days.querySelector('input').value;
        if (d) body.expiresInDays = Number(d);
        const got = await api('POST', base, body);
        showBadge(got, `Badge ${got.badge.name} (${got.badge.product})`);
        name.querySelector('input').value = '';
        await reload();
      });
    },
  }, name, product, role, days, box, h('button', { type: 'submit' }, 'Mint badge'));
  const unavailable = products.filter((p) => !p.mintable).map((p) => h('li', {}, `${p.key}: not available — ${p.reason}`));
  const note = await policyNote();
  if (gen !== latest) return; // the user moved on while this screen loaded
  show('Service badges', note, h('h2', {}, 'Mint a badge'), form, unavailable.length ? h('ul', { class: 'muted' }, unavailable) : '',
    shown, h('h2', {}, 'Badges'), filter, listBox, list);
  await reload();
}

// ---- credential kinds ------------------------------------------------------------------

// kindView is the screen of a kind that contributed one: its credentials with their usage,
// a mint form of its own fields, roll and revoke, the secret shown once.
async function kindView(screen) {
  if (needProject()) return;
  const gen = latest;
  const base = screen.collection.replace('{id}', encodeURIComponent(state.project));
  const listBox = errorBox();
  const list = h('div', {});
  const shown = h('div', {});
  const label = (name) => labelOf(name);
  const first = screen.fields.find((f) => f.type === 'string');
  const rest = screen.fields.filter((f) => f !== first);
  const text = (f, v) => {
    if (v === null || v === undefined) return h('span', { class: 'muted' }, 'none');
    if (f.type === 'strings') return v.join(' ') || h('span', { class: 'muted' }, 'none');
    if (f.type === 'date-time') return when(v);
    return typeof v === 'string' ? v : JSON.stringify(v);
  };
  const reload = async () => {
    try {
      const { credentials } = await api('GET', base);
      list.replaceChildren(table(screen.title, [first ? label(first.name) : 'Id', ...rest.map((f) => label(f.name)), 'Created', 'Expires', 'Last used', 'Last 24 h', ''], credentials, (c) => [
        h('span', {}, first ? c[first.name] : c.id, h('br', {}), h('code', { class: 'muted' }, c[screen.hint])),
        ...rest.map((f) => text(f, c[f.name])),
        when(c.createdAt), when(c.expiresAt), when(c.lastUsedAt), usageCell(c.id, first ? c[first.name] : c.id, c.usage24h),
        h('span', { class: 'row' },
          h('button', {
            type: 'button',
            onclick: async () => {
              try {
                const got = await api('POST', `${base}/${c.id}/roll`, { graceHours: 24 });
                shown.replaceChildren(secretPanel(`New secret for ${first ? got.credential[first.name] : got.credential.id}`, [['Secret', got.plaintext]]),
                  h('p', {}, 'The previous secret keeps working until ', when(got.previousSecretExpiresAt), '.'));
                await reload();
              } catch (err) { listBox.show(err); }
            },
          }, 'Roll'),
          h('button', {
            type: 'button', class: 'danger',
            onclick: async () => {
              if (!(await confirm(`Revoke ${first ? c[first.name] : c.id}? Whatever uses it stops at once.`))) return;
              try { await api('DELETE', `${base}/${c.id}`); await reload(); } catch (err) { listBox.show(err); }
            },
          }, 'Revoke')),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const box = errorBox();
  const inputs = screen.fields.map((f) => {
    if (f.enum.length) return [f, select(label(f.name), [...(f.required ? [] : [{ value: '', label: 'none' }]), ...f.enum.map((v) => ({ value: v, label: v }))])];
    const attrs = { required: f.required };
    if (f.type === 'boolean') attrs.type = 'checkbox';
    if (f.type === 'number') Object.assign(attrs, { type: 'number', step: 'any' });
    if (f.type === 'integer') Object.assign(attrs, { type: 'number', step: 1 });
    if (f.type === 'date-time') attrs.type = 'datetime-local';
    if (f.type === 'strings') attrs.placeholder = 'separated by spaces';
    return [f, field(label(f.name), attrs)];
  });
  const days = field('Expires in days', { type: 'number', min: 1, max: 365, step: 1, required: screen.expiresRequired, placeholder: screen.expiresRequired ? '' : 'never' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = {};
        for (const [f, el] of inputs) {
          const input = el.querySelector('input, select');
          const v = input.value;
          if (f.type === 'boolean') body[f.name] = input.checked;
          else if (v === '') continue;
          else if (f.type === 'strings') body[f.name] = v.split(/[\s,]+/).filter(Boolean);
          else if (f.type === 'number' || f.type === 'integer') body[f.name] = Number(v);
          else if (f.type === 'date-time') body[f.name] = new Date(v).toISOString();
          else if (f.type === 'json') body[f.name] = JSON.parse(v);
          else body[f.name] = v;
        }
        const d = days.querySelector('input').value;
        if (d) body.expiresInDays = Number(d);
        const got = await api('POST', base, body);
        shown.replaceChildren(secretPanel(`Secret for ${first ? got.credential[first.name] : got.credential.id}`, [['Secret', got.plaintext]]));
        form.reset();
        await reload();
      });
    },
  }, inputs.map(([, el]) => el), days, box, h('button', { type: 'submit' }, 'Mint'));
  if (gen !== latest) return; // the user moved on while this screen loaded
  show(screen.title, h('h2', {}, 'Mint'), form, shown, listBox, list);
  await reload();
}

// ---- sessions --------------------------------------------------------------------------

async function sessionsView() {
  const mineBox = errorBox();
  const mine = h('div', {});
  const endBox = errorBox();
  const endUsers = h('div', {});
  const reloadMine = async () => {
    try {
      const { sessions } = await api('GET', '/v1/auth-core/session/mine');
      mine.replaceChildren(table('My sessions', ['Device', 'Signed in', 'Last active', 'Expires', ''], sessions, (s) => [
        h('span', {}, s.userAgent || 'unknown device', s.current ? h('strong', {}, ' (this session)') : ''),
        when(s.createdAt), when(s.lastActiveAt), when(s.expiresAt),
        h('button', {
          type: 'button', class: 'danger',
          onclick: async () => {
            if (!(await confirm(s.current ? 'Revoke this session? You will be signed out.' : 'Revoke that session? It is signed out at once.'))) return;
            try {
              await api('DELETE', `/v1/auth-core/session/mine/${s.sessionHandle}`);
              if (s.current) { await signOut(); return; }
              await reloadMine();
            } catch (err) { mineBox.show(err); }
          },
        }, 'Revoke'),
      ]));
    } catch (err) { mineBox.show(err); }
  };
  const reloadEnd = async () => {
    if (!current()) { endUsers.replaceChildren(h('p', { class: 'muted' }, 'Choose a project to see its users\' sessions.')); return; }
    try {
      const { sessions } = await api('GET', `/v1/auth-core/session/recent?projectId=${state.project}&limit=50`);
      const revoke = async (body, text) => {
        if (!(await confirm(text))) return;
        try { await api('POST', `/v1/auth-core/session/revoke?projectId=${state.project}`, body); await reloadEnd(); } catch (err) { endBox.show(err); }
      };
      endUsers.replaceChildren(table('End-user sessions', ['User', 'Device', 'Signed in', 'Last active', ''], sessions, (s) => [
        h('code', {}, s.userId), s.userAgent || h('span', { class: 'muted' }, 'unknown'), when(s.createdAt), when(s.lastActiveAt),
        h('span', { class: 'row' },
          h('button', { type: 'button', class: 'danger', onclick: () => revoke({ sessionHandle: s.sessionHandle }, 'Revoke this session of the user?') }, 'Revoke'),
          h('button', { type: 'button', class: 'danger', onclick: () => revoke({ userId: s.userId, all: true }, 'Revoke every session of this user?') }, 'Revoke all of this user')),
      ]));
    } catch (err) { endBox.show(err); }
  };
  show('Sessions', h('h2', {}, 'My sessions'), mineBox, mine, h('h2', {}, `End users of ${current() ? current().name : 'the project'}`), endBox, endUsers);
  await Promise.all([reloadMine(), reloadEnd()]);
}

// ---- members ---------------------------------------------------------------------------

async function membersView() {
  if (needProject()) return;
  const base = `/v1/projects/${state.project}/members`;
  const listBox = errorBox();
  const list = h('div', {});
  const reload = async () => {
    try {
      const { members } = await api('GET', base);
      list.replaceChildren(table('Members', ['Email', 'Role', 'Added', ''], members, (m) => [
        m.email || m.userId, m.role, when(m.createdAt),
        m.userId === state.user.id ? h('span', { class: 'muted' }, 'you') : h('button', {
          type: 'button', class: 'danger',
          onclick: async () => {
            if (!(await confirm(`Remove ${m.email || m.userId} from the project?`))) return;
            try { await api('DELETE', `${base}/${m.userId}`); await reload(); } catch (err) { listBox.show(err); }
          },
        }, 'Remove'),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const box = errorBox();
  const email = field('Email', { type: 'email', required: true });
  const role = select('Role', ['viewer', 'developer', 'admin'].map((r) => ({ value: r, label: r })));
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        await api('POST', base, { email: email.querySelector('input').value, role: role.querySelector('select').value });
        email.querySelector('input').value = '';
        await reload();
      });
    },
  }, email, role, box, h('button', { type: 'submit' }, 'Add member'));
  const p = current();
  if (!p || p.role !== 'admin') {
    show('Members', h('p', { class: 'muted' }, 'To change a role, remove the member and add them again.'), list, listBox, h('h2', {}, 'Add a member'), form);
    await reload();
    return;
  }
  // Invitations (SPEC §9b): for people who have no account yet, by a mailed link.
  const invBase = `/v1/projects/${state.project}/invitations`;
  const invitesBox = errorBox();
  const invites = h('div', {});
  const reloadInvites = async () => {
    try {
      const { invitations } = await api('GET', invBase);
      invites.replaceChildren(table('Pending invitations', ['Email', 'Role', 'Expires', ''], invitations, (i) => [
        i.email, i.role, when(i.expiresAt),
        h('button', {
          type: 'button',
          class: 'danger',
          'aria-label': `Revoke the invitation of ${i.email}`,
          onclick: async () => {
            try { await api('DELETE', `${invBase}/${i.id}`); await reloadInvites(); } catch (err) { invitesBox.show(err); }
          },
        }, 'Revoke'),
      ]));
    } catch (err) { invitesBox.show(err); }
  };
  const inviteBox = errorBox();
  const sent = h('p', { role: 'status' });
  const inviteEmail = field('Email to invite', { type: 'email', required: true });
  const inviteRole = select('Role of the invitee', ['viewer', 'developer', 'admin'].map((r) => ({ value: r, label: r })));
  const inviteForm = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      sent.textContent = '';
      submitting(inviteForm, inviteBox, async () => {
        const inv = await api('POST', invBase, { email: inviteEmail.querySelector('input').value, role: inviteRole.querySelector('select').value });
        inviteEmail.querySelector('input').value = '';
        sent.textContent = `Invitation sent to ${inv.email}.`;
        await reloadInvites();
      });
    },
  }, inviteEmail, inviteRole, inviteBox, h('button', { type: 'submit' }, 'Send invitation'));
  show('Members', h('p', { class: 'muted' }, 'To change a role, remove the member and add them again.'), list, listBox,
    h('h2', {}, 'Add a member'), h('p', { class: 'muted' }, 'Someone who already has an account.'), form,
    h('h2', {}, 'Invite by email'), h('p', { class: 'muted' }, 'Someone without an account yet gets a link, valid 7 days, to sign up with that address and join.'),
    inviteForm, sent, invites, invitesBox);
  await Promise.all([reload(), reloadInvites()]);
}

// inviteView is where a mailed invitation lands: the person, signed in with the invited
// address (verified), accepts it and joins the project.
function inviteView(token) {
  const box = errorBox();
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const { project } = await api('POST', '/v1/auth-core/invitations/accept', { token });
        history.replaceState(null, '', '/console#/invitation-accepted'); // the token leaves the address bar
        await loadProjects();
        choose(project.id);
        drawNav();
        show('Invitation accepted', h('p', { role: 'status' }, `You are now a member of ${project.name}, as ${project.role}.`),
          h('p', {}, h('a', { href: '#/members' }, 'Continue')));
      });
    },
  }, box, h('button', { type: 'submit' }, 'Accept invitation'));
  show('Project invitation', h('p', {}, `Signed in as ${state.user.email}. Accept to join the project this invitation is for.`), form);
}

// orgInviteView accepts an organization's invitation for the signed-in person of the
// org's project, who must hold the invited address, verified.
function orgInviteView(token) {
  const box = errorBox();
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const { org, member } = await api('POST', '/v1/auth-core/orgs/invitations/accept', { token });
        history.replaceState(null, '', `/console?tenant=${encodeURIComponent(state.tenant || '')}`); // the token leaves the address bar
        show('Invitation accepted', h('p', { role: 'status' }, `You are now a member of ${org.name}, as ${member.role}.`),
          h('p', {}, h('a', { href: '#/account' }, 'Continue')));
      });
    },
  }, box, h('button', { type: 'submit' }, 'Join the organization'));
  show('Organization invitation', h('p', {}, `Signed in as ${state.user.email}. Join the organization this invitation is for.`), form);
}

// ---- audit -----------------------------------------------------------------------------

async function auditView() {
  if (needProject()) return;
  const box = errorBox();
  const list = h('div', {});
  const pager = h('div', { class: 'row' });
  const load = async (before) => {
    try {
      const page = await api('GET', `/v1/projects/${state.project}/audit?limit=20${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      list.replaceChildren(table('Audit trail', ['When', 'Action', 'Actor', 'Details'], page.events, (e) => [
        when(e.createdAt), h('code', {}, e.action), e.actorId ? h('code', {}, e.actorId) : h('span', { class: 'muted' }, 'none'),
        h('code', { class: 'details' }, JSON.stringify(e.metadata)),
      ]));
      pager.replaceChildren(
        before ? h('button', { type: 'button', onclick: () => load('') }, 'Newest') : '',
        page.nextBefore ? h('button', { type: 'button', onclick: () => load(page.nextBefore) }, 'Older') : '');
    } catch (err) { box.show(err); }
  };
  show('Audit', box, list, pager);
  await load('');
}

// ---- webhooks --------------------------------------------------------------------------

async function webhooksView() {
  if (needProject()) return;
  const base = `/v1/projects/${state.project}/webhooks`;
  const listBox = errorBox();
  const list = h('div', {});
  const shown = h('div', {});
  const history = h('div', {});
  const deliveries = async (hook) => {
    try {
      const page = await api('GET', `${base}/${hook.id}/deliveries?limit=50`);
      history.replaceChildren(h('h2', {}, `Deliveries to ${hook.url}`),
        table('Deliveries', ['Event', 'Status', 'Attempts', 'Last answer', 'Next attempt', 'Created'], page.deliveries, (d) => [
          h('code', {}, d.eventType), d.status, String(d.attempts),
          d.lastStatusCode ? String(d.lastStatusCode) : (d.lastError || h('span', { class: 'muted' }, 'none')),
          d.nextAttemptAt ? when(d.nextAttemptAt) : h('span', { class: 'muted' }, '—'), when(d.createdAt),
        ]));
    } catch (err) { listBox.show(err); }
  };
  const reload = async () => {
    try {
      const { webhooks } = await api('GET', base);
      list.replaceChildren(table('Webhooks', ['URL', 'Events', 'Added', ''], webhooks, (w) => [
        h('code', {}, w.url), w.events.length ? w.events.join(' ') : h('span', { class: 'muted' }, 'all'), when(w.createdAt),
        h('span', { class: 'row' },
          h('button', { type: 'button', onclick: () => deliveries(w) }, 'Deliveries'),
          h('button', {
            type: 'button', class: 'danger',
            onclick: async () => {
              if (!(await confirm(`Remove the webhook to ${w.url}? What is still queued for it is dropped.`))) return;
              try { await api('DELETE', `${base}/${w.id}`); history.replaceChildren(); await reload(); } catch (err) { listBox.show(err); }
            },
          }, 'Remove')),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const box = errorBox();
  const url = field('Webhook URL', { type: 'url', required: true, placeholder: 'https://hooks.example.com/authcore' });
  const events = field('Events', { placeholder: 'all (or e.g. ai_token.revoke credential.leak_revoke)' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const ev = events.querySelector('input').value.split(/[\s,]+/).filter(Boolean);
        const got = await api('POST', base, { url: url.querySelector('input').value, events: ev.length ? ev : null });
        shown.replaceChildren(secretPanel(`Signing secret for ${got.url}`, [['Signing secret', got.secret]]));
        form.reset();
        await reload();
      });
    },
  }, url, events, box, h('button', { type: 'submit' }, 'Add webhook'));
  // The event types are the server's: its API document lists what its credential kinds emit.
  const types = h('p', { class: 'muted', 'aria-label': 'Event types' });
  api('GET', '/openapi.json').then((doc) => {
    const list = doc?.components?.schemas?.EventType?.enum;
    if (Array.isArray(list)) types.textContent = `Event types: ${list.join(', ')}.`;
  }).catch(() => {});
  show('Webhooks', h('p', { class: 'muted' }, 'Signed Standard Webhooks for every credential change of the project.'),
    form, types, shown, listBox, list, history);
  await reload();
}

// ---- resources -------------------------------------------------------------------------

// The resource servers (APIs, MCP servers) the project's tokens may be issued for (SPEC §11).
async function resourcesView() {
  if (needProject()) return;
  const base = `/v1/projects/${state.project}/oauth/resources`;
  const listBox = errorBox();
  const list = h('div', {});
  const reload = async () => {
    try {
      const { resources } = await api('GET', base);
      list.replaceChildren(table('Resources', ['Name', 'URI', 'Scopes', 'Added', ''], resources, (r) => [
        r.name, h('code', {}, r.uri), r.scopes.length ? r.scopes.join(' ') : h('span', { class: 'muted' }, 'any'), when(r.createdAt),
        h('button', {
          type: 'button', class: 'danger',
          onclick: async () => {
            if (!(await confirm(`Unregister ${r.uri}? No new token will be issued for it.`))) return;
            try { await api('DELETE', `${base}/${r.id}`); await reload(); } catch (err) { listBox.show(err); }
          },
        }, 'Remove'),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const box = errorBox();
  const uri = field('Resource URI', { type: 'url', required: true, placeholder: 'https://mcp.example.com/mcp' });
  const name = field('Resource name', { required: true, maxlength: '100' });
  const scopes = field('Resource scopes', { placeholder: 'any (or e.g. files:read files:write)' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const sc = scopes.querySelector('input').value.split(/[\s,]+/).filter(Boolean);
        await api('POST', base, { uri: uri.querySelector('input').value, name: name.querySelector('input').value, scopes: sc.length ? sc : null });
        form.reset();
        await reload();
      });
    },
  }, uri, name, scopes, box, h('button', { type: 'submit' }, 'Register resource'));
  show('Resources', h('p', { class: 'muted' }, 'Tokens are issued only for the resource servers registered here; a URI belongs to one project.'),
    form, listBox, list);
  await reload();
}

// ---- connecting applications (OAuth, SPEC §16) ------------------------------------------

// consentView asks the signed-in person about an authorization request an application
// (an MCP host, say) sent them here with. The host is shown large: a name is whatever the
// application says it is, its host is where the code will go.
async function consentView(id) {
  const gen = latest;
  const box = errorBox();
  const base = `/v1/oauth/authorizations/${encodeURIComponent(id)}`;
  let req;
  try {
    req = await api('GET', base);
    if (gen !== latest) return; // the user moved on while this screen loaded
  } catch (err) {
    // The application asked for a fresher sign-in than this one (prompt=login, max_age):
    // a new sign-in here, then the question again.
    if (err.code === 'login_required' || err.code === 'mfa_required' || err.code === 'tenant_session_required') {
      state.tenant = tenantOf();
      authForm('signin', err.code === 'mfa_required' ? 'The application asks you to sign in with your second factor.'
        : 'The application asks you to sign in again before you decide.', state.user && state.user.email);
      return;
    }
    box.show(err);
    show('Connect an application', box);
    return;
  }
  // A person of several organizations picks the one this sign-in is for (SPEC §26).
  const orgPicker = req.orgs && req.orgs.length
    ? select('Organization', req.orgs.map((o, i) => ({ value: o.orgId, label: `${o.orgName} (${o.role})`, selected: i === 0 })))
    : null;
  const decide = async (decision, projectId) => {
    const orgId = decision === 'approve' && orgPicker ? orgPicker.querySelector('select').value : undefined;
    const { redirectTo } = await api('POST', base, { decision, csrfToken: req.csrfToken, projectId, orgId });
    location.assign(redirectTo);
  };
  if (req.remembered) { // approved before for as much: no need to ask again
    show('Connect an application', h('p', { role: 'status' }, `Returning to ${req.client.host}…`));
    try { await decide('approve'); } catch (err) { box.show(err); main.append(box); }
    return;
  }
  let picker = null;
  let projectLine;
  if (req.personal) { // the person's own consent: nothing to choose (SPEC §25)
    projectLine = '';
  } else if (req.projectId) {
    const p = state.projects.find((x) => x.id === req.projectId);
    projectLine = h('p', {}, 'Project: ', h('strong', {}, p ? p.name : req.projectId));
  } else {
    const mine = state.projects.filter((p) => p.role === 'admin');
    picker = select('Project to connect', mine.map((p) => ({ value: p.id, label: p.name, selected: p.id === state.project })));
    projectLine = mine.length ? picker : h('p', { role: 'alert' }, 'You are an admin of no project, so you cannot connect applications.');
  }
  // Scope step-up: what a grant holds already is listed apart; the question is the rest.
  const added = req.scopes.filter((s) => !req.grantedScopes.includes(s));
  const scopes = req.scopes.length
    ? [h('ul', { 'aria-label': 'Requested scopes' }, added.map((s) => h('li', {}, h('code', {}, s)))),
      req.grantedScopes.length ? h('p', { class: 'muted', 'aria-label': 'Scopes already allowed' }, 'Already allowed: ', req.grantedScopes.join(' ')) : '']
    : h('p', { class: 'muted' }, 'No particular scopes: what the resource and the project allow.');
  const resources = req.resources.length
    ? h('ul', { 'aria-label': 'Resources' }, req.resources.map((r) => h('li', {}, h('code', {}, r))))
    : h('p', { class: 'muted' }, 'Tokens for this server itself.');
  const form = h('form', { onsubmit: (e) => e.preventDefault() });
  const approve = h('button', {
    type: 'button',
    disabled: !req.canApprove || (!req.personal && !req.projectId && !state.projects.some((p) => p.role === 'admin')),
    onclick: () => submitting(form, box, () => decide('approve', picker ? picker.querySelector('select').value : undefined)),
  }, 'Approve');
  const deny = h('button', { type: 'button', class: 'danger', onclick: () => submitting(form, box, () => decide('deny')) }, 'Deny');
  form.append(approve, deny);
  // The host is the fact (where the code goes, and for a metadata document who publishes
  // it); the name and client_uri are only what the application says of itself.
  show('Connect an application',
    h('p', { class: 'host' }, 'An application at ', h('strong', { 'aria-label': 'Application host' }, req.client.host),
      req.client.idHost ? [' (described by ', h('strong', { 'aria-label': 'Client document host' }, req.client.idHost), ')'] : '',
      req.personal ? ' asks to sign you in (' : ' asks to act for you (', state.user.email || state.user.id, ').'),
    h('p', { class: 'muted' }, 'It calls itself ', h('q', { 'aria-label': 'Claimed name' }, req.client.name),
      req.client.clientUri ? [' and claims the site ', h('q', { 'aria-label': 'Claimed site' }, req.client.clientUri)] : '',
      ': unverified.'),
    h('p', { class: 'muted' }, 'It will be sent back to ', h('code', {}, req.client.redirectUri), '.'),
    projectLine,
    orgPicker || '',
    h('h2', {}, 'Scopes'), scopes,
    h('h2', {}, 'Resources'), resources,
    req.canApprove ? '' : h('p', { role: 'alert', class: 'error' }, req.reason),
    form, box);
}

// appsView lists the applications connected by OAuth: mine, and the project's for its admins.
async function appsView() {
  const listBox = errorBox();
  const mineList = h('div', {});
  const projectList = h('div', {});
  const rows = (grants, base, reload, withUser) => table('Connected apps', ['Application', 'Host', 'Scopes', 'Resources', withUser ? 'Approved by' : 'Project', 'Since', ''], grants, (g) => [
    g.clientName, h('strong', {}, g.clientHost, g.clientIdHost ? ` (${g.clientIdHost})` : ''), g.scopes.join(' ') || h('span', { class: 'muted' }, 'none'),
    g.resources.map((r) => h('code', {}, r)), withUser ? g.userId : (state.projects.find((p) => p.id === g.projectId)?.name || g.projectId), when(g.createdAt),
    h('button', {
      type: 'button', class: 'danger',
      onclick: async () => {
        if (!(await confirm(`Disconnect ${g.clientName} (${g.clientHost})? Its tokens stop working at once.`))) return;
        try { await api('DELETE', `${base}/${g.id}`); await reload(); } catch (err) { listBox.show(err); }
      },
    }, 'Disconnect'),
  ]);
  const reload = async () => {
    try {
      const { grants } = await api('GET', '/v1/auth-core/oauth/grants');
      mineList.replaceChildren(rows(grants, '/v1/auth-core/oauth/grants', reload, false));
      const p = current();
      if (p && p.role === 'admin') {
        const base = `/v1/projects/${p.id}/oauth/grants`;
        const got = await api('GET', base);
        projectList.replaceChildren(h('h2', {}, `Connected to ${p.name}`), rows(got.grants, base, reload, true));
      } else projectList.replaceChildren();
    } catch (err) { listBox.show(err); }
  };
  show('Connected apps', h('p', { class: 'muted' }, 'Applications you allowed to act for you through OAuth (MCP hosts, agents).'),
    listBox, h('h2', {}, 'Mine'), mineList, projectList);
  await reload();
}

// ---- usage (SPEC §19) ------------------------------------------------------------------

const HOUR = 3600_000;

// usageCell is a credential's last 24 hours on its row, with its own chart on demand.
function usageCell(id, name, u) {
  const box = h('div', {});
  const more = h('details', {
    ontoggle: async (e) => {
      if (!e.target.open || box.childElementCount) return;
      try {
        const got = await api('GET', `/v1/projects/${state.project}/usage?granularity=hour&credentialId=${encodeURIComponent(id)}`);
        box.replaceChildren(chart(got, HOUR, `Verifications of ${name} by hour`));
      } catch (err) { const eb = errorBox(); eb.show(err); box.replaceChildren(eb); }
    },
  }, h('summary', {}, `Chart of ${name}`), box);
  return h('span', {}, mini(u || { ok: 0, denied: 0, rateLimited: 0 }), more);
}

// usageView is the project's verifications over the last 24 hours, by outcome, and by kind.
async function usageView(shown) {
  if (needProject()) return;
  const got = await api('GET', `/v1/projects/${state.project}/usage?granularity=hour`);
  const kinds = {};
  for (const s of got.series) {
    const k = (kinds[s.kind] ||= { ok: 0, denied: 0, rate_limited: 0 });
    k[s.outcome] += s.points.reduce((n, p) => n + p.count, 0);
  }
  const byKind = table('Verifications by kind', ['Kind', 'OK', 'Denied', 'Rate limited'], Object.entries(kinds).sort(), ([k, v]) => [
    h('code', {}, k), String(v.ok), String(v.denied), String(v.rate_limited)]);
  shown('Usage', h('p', { class: 'muted' }, 'Every verification of the project\'s credentials in the last 24 hours (counts are written every 5 seconds).'),
    chart(got, HOUR, 'Verifications by hour'), byKind);
}

// ---- sign-in methods (SPEC §20) ---------------------------------------------------------

async function signInMethodsView(shown) {
  if (needProject()) return;
  const p = current();
  if (p.role !== 'admin') { show('Sign-in methods', h('p', {}, 'Only the project\'s admins configure how its end users sign in.')); return; }
  await methodsView(p, shown);
}

// ---- trust (SPEC §22) -------------------------------------------------------------------

async function trustScreen(shown) {
  if (needProject()) return;
  const p = current();
  if (p.role !== 'admin') { show('Trust', h('p', {}, 'Only the project\'s admins see and change what it trusts.')); return; }
  await trustView(p, shown);
}

// ---- audit streams (SPEC §28) ----------------------------------------------------------

async function auditStreamsScreen(shown) {
  if (needProject()) return;
  if (current().role !== 'admin') { shown('Audit streams', h('p', {}, 'Only the project\'s admins see and change where its audit events go.')); return; }
  await auditStreamsView(shown, state.project);
}

// ---- account ---------------------------------------------------------------------------

async function accountView(shown) {
  const box = errorBox();
  const done = h('p', { role: 'status' });
  const cur = field('Current password', { type: 'password', autocomplete: 'current-password', required: true });
  const next = field('New password', { type: 'password', autocomplete: 'new-password', required: true });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        await api('POST', '/v1/auth-core/password/change', { currentPassword: cur.querySelector('input').value, password: next.querySelector('input').value });
        form.reset();
        done.textContent = 'Password changed; your other sessions are signed out.';
      });
    },
  }, cur, next, box, h('button', { type: 'submit' }, 'Change password'));
  shown('Account', h('p', {}, `Signed in as ${state.user.email || state.user.id}.`), state.tenantUser ? await orgSwitcher() : '', await factorsSection(),
    await identitiesSection(state.user.tenantId || state.tenant), h('h2', {}, 'Change password'), form, done);
}

// orgSwitcher lets a project's person choose the organization their session acts in
// (SPEC §26): its tokens then carry the org and their role there.
async function orgSwitcher() {
  const { orgs } = await api('GET', '/v1/auth-core/orgs').catch(() => ({ orgs: [] }));
  if (!orgs.length) return '';
  const box = errorBox();
  const status = h('p', { role: 'status' });
  const pick = select('Active organization', [{ value: '', label: 'None', selected: !state.user.orgId },
    ...orgs.map((o) => ({ value: o.id, label: `${o.name} (${o.role})`, selected: o.id === state.user.orgId }))]);
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const orgId = pick.querySelector('select').value || null;
        const got = await api('POST', '/v1/auth-core/session/org', { orgId });
        state.user.orgId = orgId || '';
        status.textContent = got.org ? `Now acting in ${got.org.orgName} as ${got.org.role}.` : 'Now acting in no organization.';
      });
    },
  }, pick, h('button', { type: 'submit' }, 'Switch'), box);
  return h('section', {}, h('h2', {}, 'Organization'), form, status);
}

// ---- routing ---------------------------------------------------------------------------

const views = {
  '#/projects': projectsView, '#/agents': agentsView, '#/badges': badgesView, '#/sessions': sessionsView,
  '#/members': membersView, '#/audit': auditView, '#/account': accountView, '#/webhooks': webhooksView,
  '#/resources': resourcesView, '#/apps': appsView, '#/usage': usageView,
  '#/signin-methods': signInMethodsView, '#/trust': trustScreen,
  '#/audit-streams': auditStreamsScreen,
  '#/project-apps': (shown) => (needProject() ? undefined : current().role !== 'admin'
    ? shown('Apps', h('p', {}, 'Only the project\'s admins see and change its apps.')) : projectAppsView(shown, state.project)),
  '#/users': (shown) => (needProject() ? undefined : current().role !== 'admin'
    ? shown('Users', h('p', {}, 'Only the project\'s admins see and change its users.')) : usersView(shown, state.project)),
  '#/orgs': (shown) => (needProject() ? undefined : current().role !== 'admin'
    ? shown('Organizations', h('p', {}, 'Only the project\'s admins see and change its organizations.')) : orgsView(shown, state.project)),
  '#/approval-types': (shown) => (needProject() ? undefined : typesView(shown, state.project)),
};

// tenantViews are what a project's end user has: their approvals and connected accounts
// (SPEC §23) and their account.
const tenantViews = {
  '#/account': accountView, '#/approvals': (shown) => approvalsView(shown), '#/connections': (shown) => connectionsView(shown, state.tenant),
};

// devicePage is where a device sends its person to type its code (RFC 8628, SPEC §25).
const devicePage = '/console/device';

// consentPage is where the authorization endpoint sends a person (SPEC §16).
const consentPage = '/console/authorize';

// invitePage is where a mailed project invitation lands (SPEC §9b); orgInvitePage an
// organization's (SPEC §26).
const invitePage = '/console/invite';
const orgInvitePage = '/console/org-invite';

// latest counts renders: a screen that finishes loading after the user moved on must not
// replace the newer one.
let latest = 0;

async function render() {
  latest += 1;
  const route = location.hash.split('?')[0];
  drawNav();
  drawBanner();
  const request = new URLSearchParams(location.search).get('request');
  if (location.pathname === consentPage && request) {
    // An app signs in its project's people (SPEC §25, ?tenant=); anything else dashboard users.
    const wanted = tenantOf() || 'public';
    if (state.user && (state.user.tenantId || 'public') === wanted) return consentView(request);
    state.tenant = tenantOf();
    if (route === '#/email') return emailView(show, signedIn, state.tenant);
    // login_hint (OIDC): the address the application expects, filled in for the person.
    if (route !== '#/signup') return authForm('signin', 'Sign in to connect an application.', new URLSearchParams(location.search).get('login_hint'));
  }
  if (location.pathname === devicePage) {
    // A device of an app signs in its project's people (SPEC §25, ?tenant=); others dashboard users.
    const wanted = tenantOf() || 'public';
    if (state.user && (state.user.tenantId || 'public') === wanted) return deviceView(show, state.user);
    state.tenant = tenantOf();
    if (route !== '#/signup') return authForm('signin', 'Sign in to connect a device.');
  }
  // An org's invitation (SPEC §26) is accepted by a person of the org's project (?tenant=).
  const orgInvitation = location.pathname === orgInvitePage && new URLSearchParams(location.search).get('token');
  if (orgInvitation) {
    const wanted = tenantOf() || 'public';
    if (state.user && (state.user.tenantId || 'public') === wanted) return orgInviteView(orgInvitation);
    state.tenant = tenantOf();
    if (route === '#/email') return emailView(show, signedIn, state.tenant);
    if (route !== '#/signup') return authForm('signin', 'Sign in with the invited address to join the organization, or create an account with it.');
  }
  const invitation = location.pathname === invitePage && new URLSearchParams(location.search).get('token');
  if (invitation) {
    if (state.user) return inviteView(invitation);
    if (route !== '#/signup') return authForm('signin', 'Sign in with the invited address to accept the invitation, or create an account with it.');
  }
  if (!state.user) {
    if (route === '#/email') return emailView(show, signedIn, state.tenant);
    if (route === '#/signup') return authForm('signup');
    if (route === '#/forgot') return forgotForm();
    return authForm('signin');
  }
  const screen = !state.tenantUser && route.startsWith('#/kind/') && state.screens.find((s) => `#/kind/${s.kind}` === route);
  const view = state.tenantUser ? tenantViews[route] : (screen ? () => kindView(screen) : views[route]);
  if (!view && state.tenantUser) { location.hash = '#/account'; return undefined; }
  if (!view) { location.hash = '#/projects'; return undefined; }
  try {
    await view(showFor(latest));
  } catch (err) {
    if (!state.user) return undefined; // the session ended meanwhile: whenSignedOut shows the sign-in form
    const box = errorBox();
    box.show(err);
    show('Something went wrong', box);
  }
  return undefined;
}

window.addEventListener('hashchange', render);

// mfaStep is the second step an upstream sign-in sent the browser to (SPEC §20):
// #/mfa?token=…&methods=…, taken out of the address before anything else runs.
async function mfaStep() {
  const q = new URLSearchParams(location.hash.split('?')[1]);
  history.replaceState(null, '', location.pathname + location.search);
  return signedIn(await secondStep({ mfaToken: q.get('token'), methods: (q.get('methods') || '').split(',') }, show,
    'Your identity provider signed you in.'));
}

async function start() {
  if (location.hash.startsWith('#/mfa?')) return mfaStep();
  const token = new URLSearchParams(location.search).get('token');
  if (location.pathname === '/console/reset' && token) return resetForm(token);
  if (location.pathname === '/console/signin-link' && token) return linkLanding(token, show, signedIn);
  if (location.pathname === '/console/domain' && token) return domainLanding(token, show);
  // An org's IT admin, without an account, on a setup link (SPEC §26).
  if (location.pathname === '/console/setup') return setupLanding(show);
  await loadUser();
  if (location.pathname === '/console/verify' && token) { drawNav(); drawBanner(); return verifyEmail(token); }
  return render();
}

start();
