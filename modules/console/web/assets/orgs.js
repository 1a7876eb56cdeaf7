// Organizations (SPEC §26 "a project's business customers"), for the project's admins: the
// project's orgs — created, opened to rename or re-slug, to add, re-role and remove their
// members (users of the project's tenant), its SAML connections and SCIM directories
// (SPEC §27), to make a one-time setup link for the customer's IT admin, or to delete — and
// the roles the project defines beside the built-in owner, admin and member. Every change
// asks for a recent sign-in, as the API does.
import { api } from './api.js';
import { directorySection, samlSection } from './enterprise.js';
import { confirm, errorBox, field, h, secretPanel, select, submitting, table, when } from './ui.js';

// The setup link's intents (the API's names) and what each lets the IT admin do.
const intents = [
  ['domains', 'Verify domains'],
  ['sso', 'Single sign-on (SAML or OIDC)'],
  ['directory', 'Directory sync (SCIM)'],
  ['audit', 'Audit streams'],
];

// permissionsOf reads "invoices:read, invoices:write" or the same separated by spaces.
const permissionsOf = (text) => text.split(/[\s,]+/).filter(Boolean);

// slugTaken rewords a 409 slug_taken so it names the slug and what to do; the API's
// message does not know whether the slug was typed or derived from the name.
function slugTaken(err, slug) {
  if (err.code !== 'slug_taken') return err;
  return new Error(slug
    ? `The slug “${slug}” is taken by another organization of this project: choose another.`
    : 'The slug made from this name is taken by another organization of this project: give a slug of its own.');
}

export async function orgsView(show, project) {
  const base = `/v1/projects/${project}/orgs`;
  const rolesPath = `/v1/projects/${project}/org-roles`;
  const listBox = errorBox();
  const list = h('div', {});
  const opened = h('div', {});
  const done = h('p', { role: 'status' });
  let roles = [];
  // redraw draws the opened org again (its role selects follow the roles), when one is.
  let redraw = async () => {};

  const load = async () => {
    const { orgs } = await api('GET', base);
    list.replaceChildren(table('Organizations', ['Name', 'Slug', 'ID', 'Created', ''], orgs, (o) => [
      o.name, h('code', {}, o.slug), h('code', {}, o.id), when(o.createdAt),
      h('button', { type: 'button', 'aria-label': `Open ${o.name}`, onclick: () => open(o.id) }, 'Open'),
    ]));
  };
  const reload = async () => { try { listBox.clear(); await load(); } catch (err) { listBox.show(err); } };
  const loadRoles = async () => { roles = (await api('GET', rolesPath)).roles; };

  const open = async (id) => {
    try {
      listBox.clear();
      done.textContent = '';
      const [o, { members }] = await Promise.all([api('GET', `${base}/${id}`), api('GET', `${base}/${id}/members`)]);
      draw(o, members, errorBox());
    } catch (err) { listBox.show(err); }
  };
  const close = () => { opened.replaceChildren(); redraw = async () => {}; };

  // draw shows one org: its fields, its members and what an admin may do with it. Each
  // change shows the org as the server has it afterwards.
  const draw = (o, members, box) => {
    const at = `${base}/${o.id}`;
    redraw = async () => draw(o, (await api('GET', `${at}/members`)).members, box);
    const act = (label, text, fn, cls) => h('button', {
      type: 'button', class: cls, 'aria-label': label,
      onclick: async () => { try { box.clear(); await fn(); } catch (err) { box.show(err); } },
    }, text);
    const roleOptions = (chosen) => {
      const names = roles.map((r) => r.name);
      if (chosen && !names.includes(chosen)) names.push(chosen);
      return names.map((n) => ({ value: n, label: n, selected: n === chosen }));
    };

    // Rename or re-slug: only what changed is sent.
    const name = field(`Name of ${o.name}`, { value: o.name, required: true });
    const slug = field(`Slug of ${o.name}`, { value: o.slug, required: true, pattern: '[a-z0-9]([a-z0-9-]*[a-z0-9])?' });
    const editForm = h('form', {
      onsubmit: (e) => {
        e.preventDefault();
        submitting(editForm, box, async () => {
          const body = {};
          const n = name.querySelector('input').value;
          const s = slug.querySelector('input').value.trim();
          if (n !== o.name) body.name = n;
          if (s !== o.slug) body.slug = s;
          if (Object.keys(body).length === 0) { done.textContent = 'The organization is unchanged.'; return; }
          let got;
          try { got = await api('PATCH', at, body); } catch (err) { throw slugTaken(err, s); }
          done.textContent = `Saved ${got.name} (${got.slug}).`;
          draw(got, members, box);
          await reload();
        });
      },
    }, name, slug, h('button', { type: 'submit' }, 'Save organization'));

    const memberRows = table(`Members of ${o.name}`, ['Email', 'Role', 'Added', ''], members, (m) => {
      const pick = select(`Role of ${m.email}`, roleOptions(m.role));
      const change = h('form', {
        class: 'row',
        onsubmit: (e) => {
          e.preventDefault();
          submitting(change, box, async () => {
            const role = pick.querySelector('select').value;
            if (role === m.role) { done.textContent = `${m.email} is ${role} already.`; return; }
            await api('PATCH', `${at}/members/${m.userId}`, { role });
            done.textContent = `${m.email} is now ${role} of ${o.name}.`;
            await redraw();
          });
        },
      }, pick, h('button', { type: 'submit', 'aria-label': `Change role of ${m.email}` }, 'Change'));
      return [m.email, change, when(m.createdAt),
        act(`Remove ${m.email}`, 'Remove', async () => {
          if (!(await confirm(`Remove ${m.email} from ${o.name}? They keep their account in the project.`))) return;
          await api('DELETE', `${at}/members/${m.userId}`);
          done.textContent = `Removed ${m.email} from ${o.name}.`;
          await redraw();
        }, 'danger')];
    });

    const email = field('Member email', { type: 'email', required: true, autocomplete: 'off' });
    const role = select('Member role', roleOptions('member'));
    const addForm = h('form', {
      onsubmit: (e) => {
        e.preventDefault();
        submitting(addForm, box, async () => {
          const got = await api('POST', `${at}/members`, { email: email.querySelector('input').value, role: role.querySelector('select').value });
          done.textContent = `Added ${got.email} to ${o.name} as ${got.role}.`;
          await redraw();
        });
      },
    }, email, role, h('button', { type: 'submit' }, 'Add member'));

    // The setup link is shown once, here, until the org is drawn again.
    const link = h('div', {});
    const checks = intents.map(([value, label]) => h('label', { class: 'check' }, h('input', { type: 'checkbox', value }), label));
    const linkForm = h('form', {
      onsubmit: (e) => {
        e.preventDefault();
        submitting(linkForm, box, async () => {
          const chosen = checks.map((c) => c.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
          if (chosen.length === 0) throw new Error('Tick at least one thing the IT admin may set up.');
          const got = await api('POST', `${at}/setup-links`, { intents: chosen });
          linkForm.reset();
          link.replaceChildren(secretPanel(`Setup link for ${o.name}`, [['URL', got.url]]),
            h('p', {}, 'It opens once and expires ', when(got.expiresAt), ` (${new Date(got.expiresAt).toLocaleString()}) if nobody opened it; the page it opens lasts an hour. It lets whoever opens it set up: `,
              got.intents.map((i) => (intents.find(([v]) => v === i) || [i, i])[1]).join(', '), '.'));
        });
      },
    }, h('fieldset', {}, h('legend', {}, 'What the IT admin may set up'), checks), h('button', { type: 'submit' }, 'Create setup link'));

    // Its SAML connections and SCIM directories, as its IT admin sees them on a setup link.
    const enterprise = h('div', {});
    Promise.all([samlSection(api, at), directorySection(api, at, 'h3')])
      .then((sections) => enterprise.replaceChildren(...sections)).catch((err) => box.show(err));

    const remove = act(`Delete ${o.name}`, 'Delete organization', async () => {
      if (!(await confirm(`Delete ${o.name}? Its ${members.length === 1 ? 'member loses' : `${members.length} members lose`} it; this cannot be undone.`))) return;
      const got = await api('DELETE', at);
      close();
      done.textContent = `Deleted ${o.name}; ${got.membersRemoved === 1 ? '1 member' : `${got.membersRemoved} members`} removed.`;
      await reload();
    }, 'danger');

    opened.replaceChildren(h('section', { class: 'org', 'aria-label': `Organization ${o.name}` },
      h('h2', {}, o.name),
      h('dl', { class: 'fields' },
        h('dt', {}, 'ID'), h('dd', {}, h('code', {}, o.id)),
        h('dt', {}, 'Slug'), h('dd', {}, h('code', {}, o.slug)),
        h('dt', {}, 'Created'), h('dd', {}, when(o.createdAt))),
      editForm, box,
      h('h3', {}, 'Members'), memberRows, addForm, enterprise,
      h('h3', {}, 'Setup link'),
      h('p', { class: 'muted' }, 'A link for the customer\'s IT admin, who needs no account: it opens a console for this organization only. It is shown once and must be opened within 5 minutes.'),
      linkForm, link,
      h('div', { class: 'row' }, remove, h('button', { type: 'button', onclick: close }, 'Close'))));
  };

  const box = errorBox();
  const newName = field('Name', { required: true, autocomplete: 'off' });
  const newSlug = field('Slug (optional)', { autocomplete: 'off', placeholder: 'made from the name', pattern: '[a-z0-9]([a-z0-9-]*[a-z0-9])?' });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = { name: newName.querySelector('input').value };
        const s = newSlug.querySelector('input').value.trim();
        if (s) body.slug = s;
        let got;
        try { got = await api('POST', base, body); } catch (err) { throw slugTaken(err, s); }
        form.reset();
        done.textContent = `Created ${got.name} (${got.slug}).`;
        await reload();
        draw(got, [], errorBox());
      });
    },
  }, newName, newSlug, box, h('button', { type: 'submit' }, 'Create organization'));

  // Roles: the built-ins are shown, the project's own are edited as rows and saved
  // together, since the API replaces the whole list.
  const rolesList = h('div', {});
  const rows = h('div', {});
  const rolesBox = errorBox();
  let drafts = [];
  const drawRoles = () => {
    rolesList.replaceChildren(table('Organization roles', ['Role', 'Permissions', 'Built in'], roles, (r) => [
      r.name, r.permissions.length ? r.permissions.map((p) => h('code', { class: 'perm' }, p)) : h('span', { class: 'muted' }, 'none'),
      r.builtIn ? 'yes' : 'no',
    ]));
    rows.replaceChildren(...drafts.map((d, i) => h('div', { class: 'row role-row' },
      field(`Name of role ${i + 1}`, { value: d.name, autocomplete: 'off', oninput: (e) => { d.name = e.target.value; } }),
      field(`Permissions of role ${i + 1}`, { value: d.permissions, autocomplete: 'off', placeholder: 'invoices:read, invoices:write', oninput: (e) => { d.permissions = e.target.value; } }),
      h('button', { type: 'button', 'aria-label': `Remove role ${i + 1}`, onclick: () => { drafts.splice(i, 1); drawRoles(); } }, 'Remove'))));
  };
  const resetDrafts = () => { drafts = roles.filter((r) => !r.builtIn).map((r) => ({ name: r.name, permissions: r.permissions.join(' ') })); };
  const rolesForm = h('form', {
    'aria-label': 'Project roles',
    onsubmit: (e) => {
      e.preventDefault();
      submitting(rolesForm, rolesBox, async () => {
        const got = await api('PUT', rolesPath, drafts.map((d) => ({ name: d.name.trim(), permissions: permissionsOf(d.permissions) })));
        roles = got.roles;
        resetDrafts();
        drawRoles();
        done.textContent = `Saved ${drafts.length === 1 ? '1 role' : `${drafts.length} roles`} of the project.`;
        await redraw();
      });
    },
  }, rows, rolesBox, h('div', { class: 'row' },
    h('button', { type: 'button', onclick: () => { drafts.push({ name: '', permissions: '' }); drawRoles(); } }, 'Add a role'),
    h('button', { type: 'submit' }, 'Save roles')));

  await Promise.all([load(), loadRoles()]);
  resetDrafts();
  drawRoles();
  show('Organizations', h('p', { class: 'muted' }, 'The project\'s business customers: each has members among the project\'s users, with a role that their tokens carry. Every change asks for a recent sign-in.'),
    done, opened, listBox, list,
    h('h2', {}, 'Create an organization'), form,
    h('h2', {}, 'Roles'),
    h('p', { class: 'muted' }, 'owner, admin and member are built in. The project\'s own roles are saved together: a role removed here must not be held by anyone. Permissions are separated by commas or spaces.'),
    rolesList, rolesForm);
}
