// Apps (SPEC §25): the project's OpenID Connect apps for its own people — register one
// (its secret shown once), change its redirect URIs, rotate its secret (the old one keeps
// working for a day), delete it. "Connected apps" (#/apps) is another screen: the grants
// people gave.
import { api } from './api.js';
import { confirm, errorBox, field, h, secretPanel, select, submitting, table } from './ui.js';

const types = [
  { value: 'web', label: 'Web app (a server that keeps a secret)' },
  { value: 'spa', label: 'Single-page app (public)' },
  { value: 'native', label: 'Native app (public)' },
  { value: 'cli', label: 'CLI (public)' },
];

const uris = (text) => text.split(/[\s,]+/).filter(Boolean);

export async function projectAppsView(show, project) {
  const base = `/v1/projects/${project}/apps`;
  const listBox = errorBox();
  const list = h('div', {});
  const shown = h('div', {});
  const editing = h('div', {});
  const act = (label, text, fn, cls) => h('button', {
    type: 'button', class: cls, 'aria-label': label,
    onclick: async () => { try { listBox.clear(); await fn(); } catch (err) { listBox.show(err); } },
  }, text);
  const edit = (app) => {
    const box = errorBox();
    const input = field(`Redirect URIs of ${app.name}`, { value: app.redirectUris.join(' '), required: app.type !== 'cli' });
    const form = h('form', {
      onsubmit: (e) => {
        e.preventDefault();
        submitting(form, box, async () => {
          await api('PATCH', `${base}/${app.clientId}`, { redirectUris: uris(input.querySelector('input').value) });
          editing.replaceChildren();
          await reload();
        });
      },
    }, input, box, h('button', { type: 'submit' }, `Save ${app.name}`), ' ',
    h('button', { type: 'button', onclick: () => editing.replaceChildren() }, 'Cancel'));
    editing.replaceChildren(h('h2', {}, `Edit ${app.name}`), form);
    input.querySelector('input').focus();
  };
  const reload = async () => {
    const { apps } = await api('GET', base);
    list.replaceChildren(table('Apps', ['Name', 'Type', 'Client ID', 'Redirect URIs', 'Authentication', 'Consent', ''], apps, (a) => [
      a.name, a.type, h('code', {}, a.clientId), a.redirectUris.map((u) => h('div', {}, h('code', {}, u))),
      a.tokenEndpointAuthMethod + (a.previousSecretExpiresAt ? ` (old secret valid until ${new Date(a.previousSecretExpiresAt).toLocaleString()})` : ''),
      a.firstParty ? 'first-party: none asked' : 'third-party: asked once',
      h('span', { class: 'row' },
        act(`Edit ${a.name}`, 'Edit', async () => edit(a)),
        a.tokenEndpointAuthMethod.startsWith('client_secret') ? act(`Rotate secret of ${a.name}`, 'Rotate secret', async () => {
          if (!(await confirm(`Give ${a.name} a new secret? The current one keeps working for 24 hours.`))) return;
          const got = await api('POST', `${base}/${a.clientId}/secret`, { graceHours: 24 });
          shown.replaceChildren(secretPanel(`New client secret for ${a.name}`, [['Client secret', got.clientSecret]]));
          await reload();
        }) : '',
        act(`Delete ${a.name}`, 'Delete', async () => {
          if (!(await confirm(`Delete ${a.name}? Everyone signed in to it through authcore loses access.`))) return;
          await api('DELETE', `${base}/${a.clientId}`);
          await reload();
        }, 'danger')),
    ]));
  };
  const box = errorBox();
  const name = field('App name', { required: true, maxlength: 80 });
  const type = select('Type', types);
  const redirects = field('Redirect URIs', { placeholder: 'https://app.example.com/callback (several: separated by spaces)' });
  const firstParty = field('First-party (asks no consent)', { type: 'checkbox', checked: true });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = {
          name: name.querySelector('input').value, type: type.querySelector('select').value,
          redirectUris: uris(redirects.querySelector('input').value), firstParty: firstParty.querySelector('input').checked,
        };
        if (body.type === 'cli' && body.redirectUris.length === 0) body.grantTypes = ['urn:ietf:params:oauth:grant-type:device_code'];
        const got = await api('POST', base, body);
        const secrets = [['Client ID', got.app.clientId]];
        if (got.clientSecret) secrets.push(['Client secret', got.clientSecret]);
        shown.replaceChildren(got.clientSecret ? secretPanel(`Client secret for ${got.app.name}`, secrets)
          : h('p', { role: 'status' }, `Registered ${got.app.name}: client ID `, h('code', {}, got.app.clientId), ' (a public client: no secret).'));
        form.reset();
        await reload();
      });
    },
  }, name, type, redirects, firstParty, box, h('button', { type: 'submit' }, 'Register app'));
  show('Apps', h('p', { class: 'muted' }, 'OpenID Connect apps whose users are this project\'s people. Web apps keep a secret; single-page, native and CLI apps are public and use PKCE.'),
    h('h2', {}, 'Register an app'), form, shown, editing, listBox, list);
  await reload();
}
