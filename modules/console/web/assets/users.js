// Users (SPEC §25 "The project's people"): the project's own users (its tenant), for its
// admins — found by email prefix or name, created one by one or imported from a JSON Lines
// file (with the server's report line by line), and opened to edit their metadata, change
// their email, block or unblock them, or delete them. Dashboard users are Members, not here.
import { api, Raw } from './api.js';
import { area, confirm, errorBox, field, h, submitting, table, when } from './ui.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// objectOf reads a textarea's JSON object; an empty one is none.
function objectOf(text, what) {
  if (!text.trim()) return undefined;
  let v;
  try { v = JSON.parse(text); } catch { throw new Error(`${what} is not JSON.`); }
  if (!isObject(v)) throw new Error(`${what} must be a JSON object.`);
  return v;
}

// mergePatch is the JSON merge patch (RFC 7386) that turns from into to, which is what
// the API takes: a key gone is null, an object is patched key by key, any other change
// replaces the value. The admin edits the metadata as it is; only the difference is sent.
function mergePatch(from, to) {
  const patch = {};
  for (const k of Object.keys(from)) if (!Object.hasOwn(to, k)) patch[k] = null;
  for (const [k, v] of Object.entries(to)) {
    const was = from[k];
    if (isObject(v) && isObject(was)) {
      const p = mergePatch(was, v);
      if (Object.keys(p).length) patch[k] = p;
    } else if (!Object.hasOwn(from, k) || JSON.stringify(v) !== JSON.stringify(was)) patch[k] = v;
  }
  return patch;
}

const yes = (b) => (b ? 'yes' : 'no');
const count = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;

// issuesOf is what an import line's error lists beyond its message.
const issuesOf = (e) => (e.issues || e.details || []).map((i) => (isObject(i) && i.field ? `${i.field} ${i.reason}` : JSON.stringify(i)));

export async function usersView(show, project) {
  const base = `/v1/projects/${project}/users`;
  const listBox = errorBox();
  const list = h('div', {});
  const pager = h('div', { class: 'row' });
  const opened = h('div', {});
  const done = h('p', { role: 'status' });
  let users = [];
  let query = '';
  // loads counts list requests: an answer that comes after a newer one was asked for (a
  // search typed while More was loading) is not drawn over it.
  let loads = 0;

  const load = async (cursor) => {
    const mine = ++loads;
    const q = new URLSearchParams({ limit: '50' });
    if (query) q.set('query', query);
    if (cursor) q.set('cursor', cursor);
    const page = await api('GET', `${base}?${q}`);
    if (mine !== loads) return;
    users = cursor ? users.concat(page.users) : page.users;
    const rows = table('Users', ['Email', 'Name', 'Verified', 'Blocked', 'Created', ''], users, (u) => [
      u.email, u.name || h('span', { class: 'muted' }, 'none'), yes(u.emailVerified),
      u.blocked ? h('strong', {}, 'blocked') : 'no', when(u.createdAt),
      h('button', { type: 'button', 'aria-label': `Open ${u.email}`, onclick: () => open(u.id) }, 'Open'),
    ]);
    // "No users yet" would be wrong of a search that found nobody.
    list.replaceChildren(users.length === 0 && query ? h('p', { class: 'muted' }, `No user's email or name starts with “${query}”.`) : rows);
    pager.replaceChildren(page.nextCursor ? h('button', {
      type: 'button',
      onclick: async () => { try { listBox.clear(); await load(page.nextCursor); } catch (err) { listBox.show(err); } },
    }, 'More') : '');
  };
  const reload = async () => { try { listBox.clear(); await load(''); } catch (err) { listBox.show(err); } };

  // open shows one user and what an admin may do with them; each change shows the user as
  // the server answered, and the list again.
  const open = async (id) => {
    const box = errorBox();
    try {
      draw(await api('GET', `${base}/${id}`), box);
    } catch (err) { listBox.show(err); }
  };
  const draw = (u, box) => {
    done.textContent = '';
    const changed = async (body) => {
      const got = await api('PATCH', `${base}/${u.id}`, body);
      draw(got, box);
      await reload();
      return got;
    };
    const act = (label, text, fn, cls) => h('button', {
      type: 'button', class: cls, 'aria-label': label,
      onclick: async () => { try { box.clear(); await fn(); } catch (err) { box.show(err); } },
    }, text);

    const metadata = area(`Metadata of ${u.email}`, JSON.stringify(u.metadata || {}, null, 2), { rows: '6' });
    const metaForm = h('form', {
      onsubmit: (e) => {
        e.preventDefault();
        submitting(metaForm, box, async () => {
          const to = objectOf(metadata.querySelector('textarea').value, 'The metadata') || {};
          const patch = mergePatch(u.metadata || {}, to);
          if (Object.keys(patch).length === 0) { done.textContent = 'The metadata is unchanged.'; return; }
          await changed({ metadata: patch });
          done.textContent = `Metadata of ${u.email} saved.`;
        });
      },
    }, metadata, h('p', { class: 'muted' }, 'Only what changed is sent, as a JSON merge patch: a key removed here (or set to null) is removed. "name" is the person\'s name in their apps.'),
    h('button', { type: 'submit' }, 'Save metadata'));

    const email = field(`Email of ${u.email}`, { type: 'email', value: u.email, required: true });
    const verified = field(`Email of ${u.email} verified`, { type: 'checkbox', checked: u.emailVerified });
    const emailForm = h('form', {
      onsubmit: (e) => {
        e.preventDefault();
        submitting(emailForm, box, async () => {
          const body = {};
          const to = email.querySelector('input').value;
          const v = verified.querySelector('input').checked;
          // A new address is unproven unless the same change says otherwise: the box
          // is sent with it, so what is ticked is what the user ends up with.
          if (to !== u.email) Object.assign(body, { email: to, emailVerified: v });
          else if (v !== u.emailVerified) body.emailVerified = v;
          if (Object.keys(body).length === 0) { done.textContent = 'The email is unchanged.'; return; }
          const got = await changed(body);
          done.textContent = `Email saved: ${got.email}.`;
        });
      },
    }, email, verified, h('button', { type: 'submit' }, 'Save email'));

    const block = u.blocked
      ? act(`Unblock ${u.email}`, 'Unblock', async () => {
        await changed({ blocked: false });
        done.textContent = `${u.email} may sign in again.`;
      })
      : act(`Block ${u.email}`, 'Block', async () => {
        if (!(await confirm(`Block ${u.email}? Their sessions and grants end at once, and they cannot sign in until unblocked.`))) return;
        await changed({ blocked: true });
        done.textContent = `${u.email} is blocked.`;
      }, 'danger');
    const remove = act(`Delete ${u.email}`, 'Delete', async () => {
      if (!(await confirm(`Delete ${u.email}? The user and everything issued to them are gone for good.`))) return;
      const got = await api('DELETE', `${base}/${u.id}`);
      opened.replaceChildren();
      done.textContent = `Deleted ${u.email}: ${count(got.sessionsRevoked, 'session')} revoked, ${count(got.grantsEnded, 'grant')} ended.`;
      await reload();
    }, 'danger');

    opened.replaceChildren(h('section', { 'aria-label': `User ${u.email}` },
      h('h2', {}, u.email),
      h('dl', { class: 'fields' },
        h('dt', {}, 'ID'), h('dd', {}, h('code', {}, u.id)),
        h('dt', {}, 'Name'), h('dd', {}, u.name || h('span', { class: 'muted' }, 'none')),
        h('dt', {}, 'Email verified'), h('dd', {}, yes(u.emailVerified)),
        h('dt', {}, 'Password'), h('dd', {}, u.hasPassword ? 'set' : 'none'),
        h('dt', {}, 'Blocked'), h('dd', {}, u.blocked ? ['since ', when(u.blockedAt, 'unknown')] : 'no'),
        h('dt', {}, 'Created'), h('dd', {}, when(u.createdAt))),
      h('h3', {}, 'Metadata'), h('pre', { class: 'json' }, h('code', { 'aria-label': `Metadata JSON of ${u.email}` }, JSON.stringify(u.metadata || {}, null, 2))),
      metaForm, h('h3', {}, 'Email'), emailForm, box,
      h('div', { class: 'row' }, block, remove,
        h('button', { type: 'button', onclick: () => opened.replaceChildren() }, 'Close'))));
  };

  const searchBox = field('Search users', { type: 'search', placeholder: 'email prefix or name' });
  const search = h('form', {
    role: 'search',
    onsubmit: (e) => {
      e.preventDefault();
      query = searchBox.querySelector('input').value.trim();
      submitting(search, listBox, () => load(''));
    },
  }, searchBox, h('button', { type: 'submit' }, 'Search'));

  const box = errorBox();
  const newEmail = field('Email', { type: 'email', required: true, autocomplete: 'off' });
  const password = field('Password (optional)', { type: 'password', autocomplete: 'new-password' });
  const emailVerified = field('Email verified', { type: 'checkbox' });
  const newMetadata = area('Metadata (JSON object, optional)', '', { placeholder: '{"plan": "pro"}' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = { email: newEmail.querySelector('input').value, emailVerified: emailVerified.querySelector('input').checked };
        const pw = password.querySelector('input').value;
        if (pw) body.password = pw;
        const meta = objectOf(newMetadata.querySelector('textarea').value, 'The metadata');
        if (meta) body.metadata = meta;
        const got = await api('POST', base, body);
        form.reset();
        done.textContent = `Created ${got.email}.`;
        await reload();
        draw(got, errorBox());
      });
    },
  }, newEmail, password, emailVerified, newMetadata, box, h('button', { type: 'submit' }, 'Create user'));

  const report = h('div', {});
  const importBox = errorBox();
  const file = field('JSON Lines file', { type: 'file', accept: '.jsonl,.ndjson,application/x-ndjson,text/plain', required: true });
  const importForm = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(importForm, importBox, async () => {
        const f = file.querySelector('input').files[0];
        if (!f) throw new Error('Choose a file first.');
        const got = await api('POST', `${base}/import`, new Raw('application/x-ndjson', await f.text()));
        const failed = got.lines.filter((l) => l.error);
        report.replaceChildren(h('section', { 'aria-label': 'Import report' },
          h('p', { role: 'status' }, `Imported ${count(got.imported, 'user')} from ${f.name}; ${count(got.failed, 'line')} failed.`),
          failed.length ? table('Failed lines', ['Line', 'Error', 'Message'], failed, (l) => [
            String(l.line), h('code', {}, l.error.code), [l.error.message, issuesOf(l.error).map((i) => h('div', {}, i))],
          ]) : ''));
        importForm.reset();
        await reload();
      });
    },
  }, file, importBox, h('button', { type: 'submit' }, 'Import users'));

  show('Users', h('p', { class: 'muted' }, 'The project\'s own people: the users of its tenant, who sign in to its apps. Every change asks for a recent sign-in.'),
    search, done, opened, listBox, list, pager,
    h('h2', {}, 'Create a user'), form,
    h('h2', {}, 'Import users'),
    h('p', { class: 'muted' }, 'One JSON object a line, each like a created user: ',
      h('code', {}, '{"email": "…", "password" or "passwordHash": "…", "emailVerified": true, "metadata": {…}}'),
      '. Password hashes in bcrypt, argon2id, scrypt or PBKDF2 keep working.'),
    importForm, report);
  await load('');
}
