// Second factors in the console (SPEC §17): the sign-in's second step, sign-in with a
// passkey, enrolment with a QR code drawn here (qrcode.js is the qrcode-generator package,
// served from this origin: no CDN), recovery codes shown once, and the step-up prompt.
import { api } from './api.js';
import { errorBox, field, h, secretPanel, submitting, table, when } from './ui.js';
import qrcode from './qrcode.js';

// The browser's WebAuthn calls, with the JSON forms the server speaks.
async function create(options) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options.publicKey);
  const cred = await navigator.credentials.create({ publicKey });
  return cred.toJSON();
}

async function get(options) {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options.publicKey);
  const cred = await navigator.credentials.get({ publicKey });
  return cred.toJSON();
}

// assertion asks for a passkey. With the mfaToken of a sign-in's first step it is that
// sign-in's second factor; without, a passkey alone or a step-up, which verify the user.
export async function assertion(mfaToken, tenant) {
  // A passkey alone signs in to the page's tenant (SPEC §25: an app's project's people).
  const options = await api('POST', '/v1/auth-core/mfa/passkeys/signin/begin', mfaToken ? { mfaToken } : (tenant ? { tenantId: tenant } : {}));
  return get(options);
}

// passkeySignIn signs in with a passkey alone; resolves the sign-in answer.
export async function passkeySignIn(tenant) {
  return api('POST', '/v1/auth-core/mfa/passkeys/signin/finish', { credential: await assertion(undefined, tenant) });
}

// qr draws text as a QR code in SVG, one rect per dark module.
export function qr(text, label) {
  const code = qrcode(0, 'M');
  code.addData(text);
  code.make();
  const n = code.getModuleCount();
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `-4 -4 ${n + 8} ${n + 8}`);
  svg.setAttribute('class', 'qr');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  const bg = document.createElementNS(ns, 'rect');
  for (const [k, v] of Object.entries({ x: -4, y: -4, width: n + 8, height: n + 8, fill: '#fff' })) bg.setAttribute(k, v);
  svg.append(bg);
  for (let r = 0; r < n; r += 1) {
    for (let c = 0; c < n; c += 1) {
      if (!code.isDark(r, c)) continue;
      const m = document.createElementNS(ns, 'rect');
      for (const [k, v] of Object.entries({ x: c, y: r, width: 1, height: 1 })) m.setAttribute(k, v);
      svg.append(m);
    }
  }
  return svg;
}

// proofForm asks for one second factor among methods and hands it to submit: a code, a
// passkey, or a recovery code.
function proofForm(methods, mfaToken, submit, box) {
  const codeField = field('Authentication code', { inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: 6 });
  const recoveryField = field('Recovery code', { autocomplete: 'off' });
  recoveryField.hidden = true;
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const rc = recoveryField.querySelector('input').value.trim();
        await submit(rc ? { recoveryCode: rc } : { code: codeField.querySelector('input').value.trim() });
      });
    },
  },
  methods.includes('totp') ? codeField : '',
  recoveryField,
  box,
  h('button', { type: 'submit' }, 'Verify'),
  methods.includes('passkey') ? h('button', {
    type: 'button',
    onclick: () => submitting(form, box, async () => submit({ assertion: await assertion(mfaToken) })),
  }, 'Use a passkey') : '',
  methods.includes('recovery_code') ? h('button', {
    type: 'button',
    onclick: () => { recoveryField.hidden = false; codeField.hidden = true; recoveryField.querySelector('input').focus(); },
  }, 'Use a recovery code') : '');
  if (!methods.includes('totp')) recoveryField.hidden = !methods.includes('recovery_code') || methods.includes('passkey');
  return form;
}

// secondStep is the sign-in's second step: it resolves the session once a factor checks out.
export function secondStep(got, show, lead = 'Your password was right.') {
  return new Promise((resolve) => {
    const box = errorBox();
    const form = proofForm(got.methods, got.mfaToken, async (proof) => {
      resolve(await api('POST', '/v1/auth-core/mfa/verify', { mfaToken: got.mfaToken, ...proof }));
    }, box);
    show('Two-step sign-in', h('p', {}, `${lead} Now confirm it is you with a second factor.`), form);
    const first = form.querySelector('input:not([hidden])');
    if (first) first.focus();
  });
}

// stepUp prompts for a second factor in a dialog and resolves true once the session
// authenticated again (the server renews the access-token cookie).
export async function stepUp(user) {
  const { factors } = await api('GET', '/v1/auth-core/mfa');
  const methods = [...new Set(factors.map((f) => f.type))];
  methods.push('recovery_code');
  return new Promise((resolve) => {
    const box = errorBox();
    const dlg = h('dialog', { 'aria-labelledby': 'stepup-title' });
    const finish = (ok) => { dlg.close(); dlg.remove(); resolve(ok); };
    let form;
    if (methods.length === 1) {
      // No factor: the server asks for a sign-in within 5 minutes; the password gives one.
      const pw = field('Password', { type: 'password', autocomplete: 'current-password', required: true });
      form = h('form', {
        onsubmit: (e) => {
          e.preventDefault();
          submitting(form, box, async () => {
            // A project's end user signs in to their own tenant.
            const tenant = user.tenantId && user.tenantId !== 'public' ? { tenantId: user.tenantId } : {};
            await api('POST', '/v1/auth-core/signin', { email: user.email, password: pw.querySelector('input').value, ...tenant });
            finish(true);
          });
        },
      }, pw, box, h('button', { type: 'submit' }, 'Confirm'));
    } else {
      form = proofForm(methods, undefined, async (proof) => {
        await api('POST', '/v1/auth-core/mfa/step-up', proof);
        finish(true);
      }, box);
    }
    dlg.append(h('h2', { id: 'stepup-title' }, 'Confirm it is you'),
      h('p', {}, 'This action needs a recent authentication.'), form,
      h('p', {}, h('button', { type: 'button', onclick: () => finish(false) }, 'Cancel')));
    document.body.append(dlg);
    dlg.showModal();
  });
}

// factorsSection is the account screen's two-factor part.
export async function factorsSection() {
  const section = h('section', { 'aria-labelledby': 'mfa-title' });
  const shown = h('div');
  const box = errorBox();
  const draw = async () => {
    const { factors, recoveryCodesLeft } = await api('GET', '/v1/auth-core/mfa');
    const list = table('Second factors', ['Name', 'Type', 'Added', 'Last used', ''], factors, (f) => [
      f.name, f.type === 'totp' ? 'Authenticator app' : 'Passkey', when(f.createdAt), when(f.lastUsedAt),
      h('button', {
        type: 'button',
        class: 'danger',
        'aria-label': `Remove ${f.name}`,
        onclick: async () => {
          try {
            await api('DELETE', `/v1/auth-core/mfa/${f.id}`);
            await draw();
          } catch (err) { box.show(err); }
        },
      }, 'Remove'),
    ]);
    const actions = h('div', { class: 'row' },
      h('button', { type: 'button', onclick: addApp }, 'Add authenticator app'),
      h('button', { type: 'button', onclick: addPasskey }, 'Add passkey'),
      factors.length ? h('button', { type: 'button', onclick: newCodes }, 'New recovery codes') : '');
    section.replaceChildren(h('h2', { id: 'mfa-title' }, 'Two-factor authentication'), list,
      factors.length ? h('p', {}, `${recoveryCodesLeft} recovery codes left.`) : h('p', { class: 'muted' }, 'Add a second factor to protect what you mint.'),
      actions, box, shown);
  };
  const codes = (list) => shown.replaceChildren(secretPanel('Recovery codes', [['Codes', list.join(' ')]]),
    h('p', {}, 'Each works once, when you have no other factor at hand.'));
  async function addApp() {
    box.clear();
    try {
      const pending = await api('POST', '/v1/auth-core/mfa/totp', {});
      const code = field('Code from the app', { inputmode: 'numeric', autocomplete: 'one-time-code', required: true });
      const formBox = errorBox();
      const form = h('form', {
        onsubmit: (e) => {
          e.preventDefault();
          submitting(form, formBox, async () => {
            const got = await api('POST', `/v1/auth-core/mfa/totp/${pending.id}/confirm`, { code: code.querySelector('input').value.trim() });
            await draw();
            if (got.recoveryCodes) codes(got.recoveryCodes);
          });
        },
      }, code, formBox, h('button', { type: 'submit' }, 'Confirm'));
      shown.replaceChildren(h('figure', { class: 'qr' }, qr(pending.otpauthUrl, 'QR code for your authenticator app'),
        h('figcaption', {}, 'Scan with your authenticator app, or type the key: ', h('code', { 'data-secret': 'TOTP key' }, pending.secret))), form);
      code.querySelector('input').focus();
    } catch (err) { box.show(err); }
  }
  async function addPasskey() {
    box.clear();
    try {
      const options = await api('POST', '/v1/auth-core/mfa/passkeys/register/begin', {});
      const got = await api('POST', '/v1/auth-core/mfa/passkeys/register/finish', await create(options));
      await draw();
      if (got.recoveryCodes) codes(got.recoveryCodes);
      else shown.replaceChildren(h('p', { role: 'status' }, `Passkey added: ${got.factor.name}.`));
    } catch (err) { box.show(err); }
  }
  async function newCodes() {
    box.clear();
    try {
      const got = await api('POST', '/v1/auth-core/mfa/recovery-codes');
      codes(got.recoveryCodes);
      await draw();
    } catch (err) { box.show(err); }
  }
  await draw();
  return section;
}
