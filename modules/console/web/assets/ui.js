// Small DOM helpers. Text always goes in as text nodes, never as HTML, so nothing the API
// returns can inject markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

let ids = 0;

// field is a labelled input: the label names it for assistive technology and tests.
export function field(label, attrs) {
  const id = `f${++ids}`;
  return h('div', { class: 'field' }, h('label', { for: id }, label), h('input', { id, name: label, ...attrs }));
}

// area is a labelled textarea (JSON, mostly), holding text as its initial value.
export function area(label, text, attrs) {
  const id = `f${++ids}`;
  return h('div', { class: 'field wide' }, h('label', { for: id }, label),
    h('textarea', { id, name: label, rows: '4', spellcheck: 'false', ...attrs }, text || ''));
}

export function select(label, options, attrs) {
  const id = `f${++ids}`;
  return h('div', { class: 'field' }, h('label', { for: id }, label),
    h('select', { id, name: label, ...attrs }, options.map((o) => h('option', { value: o.value, disabled: o.disabled, selected: o.selected }, o.label))));
}

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const units = [['year', 31536e6], ['month', 2592e6], ['day', 864e5], ['hour', 36e5], ['minute', 6e4], ['second', 1e3]];

// when is a time shown relative ("in 29 days", "3 minutes ago"), exact on hover.
export function when(iso, never = 'never') {
  if (!iso) return h('span', { class: 'muted' }, never);
  const t = new Date(iso);
  const d = t.getTime() - Date.now();
  let text = 'just now';
  for (const [unit, ms] of units) {
    if (Math.abs(d) >= ms || unit === 'second') {
      text = Math.abs(d) < 1e3 ? 'just now' : rtf.format(Math.round(d / ms), unit);
      break;
    }
  }
  return h('time', { datetime: t.toISOString(), title: t.toLocaleString() }, text);
}

// table renders rows as a table whose cells carry their column name, so narrow screens can
// show each row as a card.
export function table(caption, columns, rows, render) {
  if (rows.length === 0) return h('p', { class: 'muted' }, `No ${caption.toLowerCase()} yet.`);
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, render(r).map((cell, i) => h('td', { 'data-label': columns[i] }, cell))))));
}

// errorBox shows the API's message for a failed action; the form keeps what was typed.
export function errorBox() {
  const box = h('p', { class: 'error', role: 'alert', hidden: true });
  box.show = (err) => {
    let msg = err.message || String(err);
    if (err.issues && err.issues.length) msg += ': ' + err.issues.map((i) => `${i.field} ${i.reason}`).join('; ');
    box.textContent = msg;
    box.hidden = false;
  };
  box.clear = () => { box.hidden = true; box.textContent = ''; };
  return box;
}

// submitting disables a form's buttons while its request runs.
export async function submitting(form, box, fn) {
  box.clear();
  const buttons = form.querySelectorAll('button');
  buttons.forEach((b) => { b.disabled = true; });
  try {
    await fn();
  } catch (err) {
    box.show(err);
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
}

// confirm asks in a modal dialog; resolves true when the user confirms.
export function confirm(text) {
  const dlg = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'yes'), { once: true });
    dlg.returnValue = '';
    dlg.showModal();
    document.getElementById('confirm-no').focus();
  });
}

// secretPanel shows one-time secrets with Copy buttons and the warning that they will not
// be shown again.
export function secretPanel(title, secrets) {
  return h('section', { class: 'secret', 'aria-label': title },
    h('h3', {}, title),
    h('p', { class: 'warn' }, 'Copy it now: it will not be shown again.'),
    secrets.map(([label, value]) => {
      const code = h('code', { 'data-secret': label }, value);
      const status = h('span', { class: 'muted', role: 'status' });
      const copy = h('button', {
        type: 'button',
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(value);
            status.textContent = 'Copied.';
          } catch {
            const r = document.createRange();
            r.selectNodeContents(code);
            getSelection().removeAllRanges();
            getSelection().addRange(r);
            status.textContent = 'Selected: press Ctrl+C to copy.';
          }
        },
      }, 'Copy');
      return h('div', { class: 'secret-row' }, h('span', { class: 'secret-label' }, label), code, copy, status);
    }));
}
