// An organization's enterprise connections (SPEC §27): a SAML identity provider, set up
// from its metadata and tested by signing in once, and SCIM directories its identity
// provider provisions people into. The same sections serve the IT admin's setup page
// (a setup session's bearer) and the project admin's Organizations screen (the console's
// session): each takes send(method, path, body), the caller's own request helper, and
// the org's base path, so the two screens differ only in who asks.
import { confirm, errorBox, field, h, secretPanel, submitting, table, when } from './ui.js';

// The attributes a SAML connection maps, with what most identity providers call them
// (Okta's and Entra's defaults differ; the placeholder is only a hint).
const attributes = [
  ['email', 'Email attribute', 'email or mail'],
  ['firstName', 'First name attribute', 'firstName'],
  ['lastName', 'Last name attribute', 'lastName'],
  ['groups', 'Groups attribute', 'groups'],
];

// spValues are what the IT admin copies into their identity provider: the values the
// server answers for the connection.
function spValues(c) {
  const sp = c.sp || c;
  return [['SP entity ID', sp.entityId || sp.spEntityId], ['SP metadata URL', sp.metadataUrl || sp.spMetadataUrl], ['ACS URL', sp.acsUrl]];
}

function spList(c) {
  return h('dl', { class: 'fields', 'aria-label': `Service provider values of ${c.name}` },
    spValues(c).filter(([, v]) => v).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, h('code', { 'aria-label': `${k} of ${c.name}` }, v))]));
}

// samlSection lists the org's SAML connections with the values their IdP needs, adds one
// from the IdP's metadata (a file read here and sent as its XML, or its URL), and tests
// one by a sign-in whose mapped attributes appear on the page.
export async function samlSection(send, base) {
  const box = errorBox();
  const list = h('div', {});
  const result = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const { connections } = await send('GET', `${base}/connections`);
    const saml = connections.filter((c) => c.type === 'saml');
    if (saml.length === 0) { list.replaceChildren(h('p', { class: 'muted' }, 'No SAML connection yet.')); return; }
    list.replaceChildren(table('SAML connections', ['Name', 'Identity provider', 'Your IdP needs', ''], saml, (c) => [
      h('strong', { class: 'name' }, c.name),
      h('div', {}, h('code', {}, c.idpEntityId || ''), h('br'),
        h('span', { class: 'muted' }, c.idpMetadataUrl ? 'metadata from its URL, read ' : 'metadata uploaded ', when(c.metadataReadAt))),
      spList(c),
      h('div', { class: 'row' },
        h('button', { type: 'button', onclick: () => test(c) }, `Test ${c.name}`),
        // A URL's metadata is read again on a schedule; after a key rollover at the IdP,
        // now.
        c.idpMetadataUrl ? h('button', {
          type: 'button',
          onclick: async () => {
            try {
              box.clear();
              await send('POST', `${base}/connections/${encodeURIComponent(c.id)}/metadata/refresh`);
              result.replaceChildren(h('p', { role: 'status' }, `Read the metadata of ${c.name} again.`));
              await load();
            } catch (err) { box.show(err); }
          },
        }, `Read metadata of ${c.name} again`) : '',
        h('button', {
          type: 'button', class: 'danger',
          onclick: async () => {
            if (!(await confirm(`Remove ${c.name}? People who sign in only through it lose that way in.`))) return;
            try { box.clear(); await send('DELETE', `${base}/connections/${encodeURIComponent(c.id)}`); await load(); } catch (err) { box.show(err); }
          },
        }, `Remove ${c.name}`)),
    ]));
  };
  const test = async (c) => {
    try {
      box.clear();
      const at = `${base}/connections/${encodeURIComponent(c.id)}/test`;
      const got = await send('POST', at);
      result.replaceChildren(h('p', {}, `Sign in once at ${c.name} in the window that opens (or at `, h('a', { href: got.url, target: '_blank', rel: 'noopener' }, 'this address'),
        '); the attributes it maps appear here.'));
      window.open(got.url, '_blank', 'noopener');
      watchTest(send, `${at}/${encodeURIComponent(got.testId)}`, result);
    } catch (err) { box.show(err); }
  };

  const name = field('SAML connection name', { required: true, placeholder: 'Okta SAML' });
  // The metadata: a file the IdP exported (read here, never uploaded as a file), or the
  // URL the server fetches it from (and refreshes it by).
  const file = field('IdP metadata file', { type: 'file', accept: '.xml,application/xml,text/xml,application/samlmetadata+xml' });
  const url = field('IdP metadata URL', { type: 'url', placeholder: 'https://idp.example.com/metadata' });
  const mapping = attributes.map(([key, label, hint]) => [key, field(label, { placeholder: hint, autocomplete: 'off', required: key === 'email' })]);
  const unsolicited = h('label', { class: 'check' }, h('input', { type: 'checkbox', 'aria-label': 'Allow sign-in started at the IdP (IdP-initiated)' }),
    ' Allow sign-in started at the IdP (IdP-initiated)');
  const value = (f) => f.querySelector('input').value.trim();
  const form = h('form', {
    'aria-label': 'Add a SAML connection',
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const picked = file.querySelector('input').files[0];
        if (!picked && !value(url)) throw new Error('Give the IdP\'s metadata: its file or its URL.');
        const body = { type: 'saml', name: value(name), allowIdpInitiated: unsolicited.querySelector('input').checked, attributeMapping: {} };
        if (picked) body.metadataXml = await picked.text();
        else body.metadataUrl = value(url);
        for (const [key, f] of mapping) if (value(f)) body.attributeMapping[key] = value(f);
        const created = await send('POST', `${base}/connections`, body);
        form.reset();
        result.replaceChildren(h('section', { 'aria-label': 'Values for your identity provider' },
          h('p', { role: 'status' }, `Added ${created.name}. Give your identity provider these values:`), spList(created)));
        await load();
      });
    },
  }, name, file, url, mapping.map(([, f]) => f), unsolicited, h('button', { type: 'submit' }, 'Add SAML connection'));
  await load().catch((err) => box.show(err));
  return h('section', { 'aria-label': 'SAML' }, h('h3', {}, 'SAML'),
    h('p', { class: 'muted' }, 'Upload your identity provider\'s metadata or give its URL. Then give it the values shown for the connection, and test it by signing in once.'),
    list, form, result, box);
}

// watchTest shows a connection test's mapped attributes once the IT admin signed in at
// the identity provider (asked every two seconds, for as long as the test lives).
export async function watchTest(send, path, result) {
  for (let i = 0; i < 300; i += 1) {
    await new Promise((done) => { setTimeout(done, 2000); });
    let got;
    try {
      got = await send('GET', path);
    } catch {
      return;
    }
    if (got.status === 'done') {
      const r = got.result || {};
      result.replaceChildren(h('section', { 'aria-label': 'Test result' }, h('h3', {}, 'Signed in: what the connection maps'),
        table('Mapped attributes', ['Attribute', 'Value'], Object.entries(r), ([k, v]) => [k, h('code', {}, Array.isArray(v) ? v.join(', ') : String(v))])));
      return;
    }
    if (got.status === 'failed') {
      result.replaceChildren(h('p', { class: 'error', role: 'alert' }, `The test sign-in failed: ${got.error || 'the identity provider\'s answer was refused'}.`));
      return;
    }
  }
}

// directorySection creates the org's SCIM directories (base URL and token shown once),
// lists them with their last sync, rolls a token, deletes one, and maps the directory's
// groups to org roles.
export async function directorySection(send, base, heading = 'h2') {
  const box = errorBox();
  const list = h('div', {});
  const shown = h('div', {});
  const saved = h('p', { role: 'status' });
  const dirs = `${base}/directories`;
  // showSecret shows a directory's token once, with where it goes in the IdP.
  const showSecret = (title, got) => shown.replaceChildren(secretPanel(title, [['SCIM base URL', got.baseUrl], ['SCIM token', got.token]]),
    h('p', { class: 'muted' }, 'In your identity provider\'s provisioning settings: the base URL is Okta\'s "SCIM connector base URL" and Entra\'s "Tenant URL"; the token is the bearer token ("API token", "Secret token").'));
  const load = async () => {
    const { directories } = await send('GET', dirs);
    list.replaceChildren(table('Directories', ['Directory', 'Base URL', 'Last sync', 'Group roles', ''], directories, (d) => {
      const label = d.name || d.id;
      const at = `${dirs}/${encodeURIComponent(d.id)}`;
      return [
        h('div', { class: 'directory' }, h('strong', { class: 'name' }, label),
          h('span', { class: 'muted' }, `${d.users || 0} people, ${d.groups || 0} groups`),
          d.tokenLive === false ? h('span', { class: 'error' }, 'Token revoked: roll it.') : h('code', { 'aria-label': `Token of ${label}` }, d.tokenHint)),
        h('code', { 'aria-label': `Base URL of ${label}` }, d.baseUrl),
        h('span', { 'aria-label': `Last sync of ${label}` }, when(d.lastSyncAt, 'not yet')),
        groupRoles(send, at, d, label, box, load, saved),
        h('div', { class: 'row' },
          h('button', {
            type: 'button',
            onclick: async () => {
              if (!(await confirm(`Roll the token of ${label}? The current token stops working: your identity provider needs the new one.`))) return;
              try { box.clear(); showSecret(`New token for ${label}`, await send('POST', `${at}/token`)); await load(); } catch (err) { box.show(err); }
            },
          }, `Roll token of ${label}`),
          h('button', {
            type: 'button', class: 'danger',
            onclick: async () => {
              if (!(await confirm(`Delete ${label}? Its token stops working; the people it provisioned stay.`))) return;
              try { box.clear(); await send('DELETE', at); shown.replaceChildren(); await load(); } catch (err) { box.show(err); }
            },
          }, `Delete ${label}`)),
      ];
    }));
  };
  const name = field('Directory name', { placeholder: 'Okta', autocomplete: 'off' });
  const form = h('form', {
    'aria-label': 'Create a directory',
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const n = name.querySelector('input').value.trim();
        const got = await send('POST', dirs, n ? { name: n } : {});
        form.reset();
        showSecret(`Directory ${(got.directory && got.directory.name) || got.id}`, got);
        await load();
      });
    },
  }, name, h('button', { type: 'submit' }, 'Create directory'));
  await load().catch((err) => box.show(err));
  return h('section', { 'aria-label': 'Directory sync' }, h(heading, {}, 'Directory sync (SCIM)'),
    h('p', { class: 'muted' }, 'Your identity provider creates, updates and deactivates your people here. A deactivated person\'s sessions, grants and connections end at once.'),
    list, saved, form, shown, box);
}

// groupRoles edits which org role each of the directory's groups gives (by the group's
// display name); the whole mapping is saved at once, as the API replaces it.
function groupRoles(send, at, d, label, box, load, saved) {
  const rows = Object.entries(d.groupRoles || {}).map(([group, role]) => ({ group, role }));
  const body = h('div', {});
  const draw = () => body.replaceChildren(...rows.map((r, i) => h('div', { class: 'row' },
    field(`Group ${i + 1} of ${label}`, { value: r.group, autocomplete: 'off', oninput: (e) => { r.group = e.target.value; } }),
    field(`Role of group ${i + 1} of ${label}`, { value: r.role, autocomplete: 'off', list: 'org-role-names', oninput: (e) => { r.role = e.target.value; } }),
    h('button', { type: 'button', 'aria-label': `Remove group ${i + 1} of ${label}`, onclick: () => { rows.splice(i, 1); draw(); } }, 'Remove'))));
  draw();
  const form = h('form', {
    'aria-label': `Group roles of ${label}`,
    onsubmit: (e) => {
      e.preventDefault();
      saved.textContent = '';
      submitting(form, box, async () => {
        const groupRoles = {};
        for (const r of rows) if (r.group.trim()) groupRoles[r.group.trim()] = r.role.trim();
        await send('PATCH', at, { groupRoles });
        const pairs = Object.entries(groupRoles).map(([g, r]) => `${g} → ${r}`);
        saved.textContent = `Saved the group roles of ${label}: ${pairs.length ? pairs.join(', ') : 'none'}.`;
        await load();
      });
    },
  }, body, h('datalist', { id: 'org-role-names' }, ['member', 'admin', 'owner'].map((r) => h('option', { value: r }))),
  h('button', { type: 'button', onclick: () => { rows.push({ group: '', role: 'member' }); draw(); } }, `Add a group to ${label}`),
  h('button', { type: 'submit' }, `Save group roles of ${label}`));
  return form;
}
