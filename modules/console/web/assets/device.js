// The device flow's page (RFC 8628, SPEC §25): a CLI or a TV showed the person a code and
// this address. The person, signed in, types or confirms the code, sees which app asks
// and for what, and approves or denies; the device then gets its tokens or its refusal.
import { api } from './api.js';
import { errorBox, field, h, submitting } from './ui.js';

export async function deviceView(show, user) {
  const box = errorBox();
  const code = field('Code shown on the device', { autocomplete: 'off', required: true, value: new URLSearchParams(location.search).get('user_code') || undefined });
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const userCode = code.querySelector('input').value;
        const req = await api('POST', '/v1/oauth/device/lookup', { userCode });
        ask(show, user, userCode, req);
      });
    },
  }, code, box, h('button', { type: 'submit' }, 'Continue'));
  show('Connect a device', h('p', {}, 'Enter the code your device shows to sign it in as ', h('strong', {}, user.email || user.id), '.'), form);
}

function ask(show, user, userCode, req) {
  const box = errorBox();
  const form = h('form', { onsubmit: (e) => e.preventDefault() });
  const decide = (decision) => submitting(form, box, async () => {
    await api('POST', '/v1/oauth/device/decide', { userCode, decision, csrfToken: req.csrfToken });
    show(decision === 'approve' ? 'Device connected' : 'Device refused',
      h('p', { role: 'status' }, decision === 'approve' ? 'You can go back to your device: it is signed in.' : 'The device was refused; nothing was shared.'));
  });
  form.append(h('button', { type: 'button', onclick: () => decide('approve') }, 'Approve'),
    h('button', { type: 'button', class: 'danger', onclick: () => decide('deny') }, 'Deny'));
  show('Connect a device',
    h('p', {}, h('strong', { 'aria-label': 'Application' }, req.client.name), ' asks to act for you (', user.email || user.id, ').'),
    h('h2', {}, 'Scopes'),
    req.scopes.length ? h('ul', { 'aria-label': 'Requested scopes' }, req.scopes.map((s) => h('li', {}, h('code', {}, s)))) : h('p', { class: 'muted' }, 'No particular scopes.'),
    req.resources.length ? [h('h2', {}, 'Resources'), h('ul', { 'aria-label': 'Resources' }, req.resources.map((r) => h('li', {}, h('code', {}, r))))] : '',
    h('p', { class: 'muted' }, 'Approve only if you started this on your own device and it shows the same code.'),
    form, box);
}
