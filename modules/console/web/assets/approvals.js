// Approvals (SPEC §23): what a project's agents ask the signed-in person to approve. The
// binding message comes first and large; each detail is drawn field by field from its
// type's registered JSON Schema (titles as labels, in the schema's order), fields the
// schema does not name are shown too, and approving sends back the digest of exactly what
// was drawn. Text goes in as text nodes only (ui.js), whatever the agent wrote.
import { api } from './api.js';
import { confirm, errorBox, field, h, submitting, table, when } from './ui.js';

// value draws one field's value: objects as nested lists by their schema, arrays item by
// item, everything else as its text.
function value(v, schema) {
  if (v === null || v === undefined) return h('span', { class: 'muted' }, 'none');
  if (Array.isArray(v)) return h('ol', {}, v.map((x) => h('li', {}, value(x, schema && schema.items))));
  if (typeof v === 'object') return fields(v, schema);
  return h('span', {}, String(v));
}

// fields draws an object's fields: the schema's properties in their order, labelled with
// their titles, then any the schema does not name.
function fields(obj, schema) {
  const props = (schema && schema.properties) || {};
  const named = Object.keys(props).filter((k) => k in obj);
  const others = Object.keys(obj).filter((k) => !(k in props));
  const row = (k, label, s) => [h('dt', {}, label), h('dd', { 'data-field': k }, value(obj[k], s))];
  return h('dl', { class: 'fields' },
    named.flatMap((k) => row(k, props[k].title || k, props[k])),
    others.flatMap((k) => row(k, `${k} (not described by its type)`, null)));
}

function detail(d, types) {
  const t = types.find((x) => x.type === d.type) || { name: d.type, schema: {}, changed: true };
  const rest = { ...d };
  delete rest.type;
  return h('section', { class: 'detail', 'aria-label': t.name },
    h('h3', {}, t.name, ' ', h('span', { class: 'muted' }, `(${d.type})`)),
    t.changed ? h('p', { class: 'error' }, 'This type changed since the request was made: it cannot be approved.') : '',
    fields(rest, t.schema));
}

function card(a, redraw) {
  const box = errorBox();
  const who = a.client.name ? `${a.client.name}` : a.client.id;
  const decide = (verb, body) => async () => {
    box.clear();
    try {
      await api('POST', `/v1/auth-core/approvals/${a.id}/${verb}`, body);
      await redraw();
    } catch (err) { box.show(err); }
  };
  const open = a.status === 'pending';
  return h('article', { class: 'approval', 'aria-label': `Request from ${who}` },
    h('h2', {}, `${who} asks for your approval`),
    a.bindingMessage ? h('p', { class: 'binding', 'aria-label': 'Binding message' }, a.bindingMessage) : '',
    h('p', { class: 'muted' }, 'Client ', h('code', {}, a.client.id),
      a.scopes.length ? ` · scopes ${a.scopes.join(' ')}` : '', ' · expires ', when(a.expiresAt)),
    a.authorizationDetails.map((d) => detail(d, a.types)),
    open ? h('div', { class: 'row' },
      h('button', { type: 'button', class: 'approve', onclick: decide('approve', { detailsDigest: a.detailsDigest }) }, 'Approve'),
      h('button', { type: 'button', class: 'danger', onclick: decide('deny') }, 'Deny'))
      : h('p', { role: 'status' }, `This request is ${a.status}.`),
    box);
}

// approvalsView draws the inbox; a mailed link names one request (?request=), shown first
// whatever its state.
export async function approvalsView(show) {
  const wanted = new URLSearchParams(location.hash.split('?')[1] || '').get('request');
  const list = h('div');
  const draw = async () => {
    const { approvals } = await api('GET', '/v1/auth-core/approvals');
    let shown = approvals;
    if (wanted && !approvals.some((a) => a.id === wanted)) {
      try { shown = [await api('GET', `/v1/auth-core/approvals/${encodeURIComponent(wanted)}`), ...approvals]; } catch { /* not theirs, or gone */ }
    }
    list.replaceChildren(...(shown.length ? shown.map((a) => card(a, draw)) : [h('p', { class: 'muted' }, 'Nothing is waiting for your approval.')]));
  };
  await draw();
  show('Approvals', h('p', {}, 'Agents of this project ask you here before they act. Approve only what you expect: the details below are exactly what the agent will be allowed to do.'), list);
}

// typesView is a project's authorization details types (SPEC §23), for its admins: what
// its agents may ask people to approve, each described by a JSON Schema whose titled
// properties become the fields people read.
export async function typesView(show, project) {
  const base = `/v1/projects/${project}/oauth/authorization-details`;
  const listBox = errorBox();
  const list = h('div');
  const reload = async () => {
    try {
      const { types } = await api('GET', base);
      list.replaceChildren(table('Approval types', ['Name', 'Type', 'Fields', 'Updated', ''], types, (t) => [
        t.name, h('code', {}, t.type), Object.entries(t.schema.properties || {}).filter(([k]) => k !== 'type').map(([k, p]) => p.title || k).join(', '),
        when(t.updatedAt),
        h('button', {
          type: 'button', class: 'danger', 'aria-label': `Remove ${t.type}`,
          onclick: async () => {
            if (!(await confirm(`Remove ${t.type}? Requests naming it can no longer be approved.`))) return;
            try { await api('DELETE', `${base}/${encodeURIComponent(t.type)}`); await reload(); } catch (err) { listBox.show(err); }
          },
        }, 'Remove'),
      ]));
    } catch (err) { listBox.show(err); }
  };
  const box = errorBox();
  const type = field('Type', { required: true, placeholder: 'payment_initiation', pattern: '[a-z][a-z0-9_.:\\-]{0,63}' });
  const name = field('Name shown to people', { required: true, maxlength: '80' });
  const schemaId = 'schema-text';
  const schema = h('div', { class: 'field wide' }, h('label', { for: schemaId }, 'JSON Schema'),
    h('textarea', { id: schemaId, name: 'JSON Schema', rows: '8', required: true, spellcheck: 'false' },
      '{"type":"object","required":["amount"],"properties":{"type":{"type":"string"},"amount":{"type":"number","title":"Amount"}}}'));
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        let parsed;
        try { parsed = JSON.parse(schema.querySelector('textarea').value); } catch { throw new Error('The schema is not JSON.'); }
        await api('POST', base, { type: type.querySelector('input').value, name: name.querySelector('input').value, schema: parsed });
        form.reset();
        await reload();
      });
    },
  }, type, name, schema, box, h('button', { type: 'submit' }, 'Register type'));
  show('Approval types', h('p', { class: 'muted' }, 'Agents ask the project\'s people to approve actions of these types; each detail is checked against its schema and shown field by field, by the titles given here.'),
    form, listBox, list);
  await reload();
}
