// Connected accounts (SPEC §23's token vault): the person connects their account with one
// of their project's providers for the agents they choose, sees their connections (never
// a token) and revokes them. The tokens a connection takes are those their latest sign-in
// with the provider left; without one, the screen sends them through the provider first.
import { api } from './api.js';
import { confirm, errorBox, h, select, submitting, table, when } from './ui.js';
import { methodsOf } from './federation.js';

export async function connectionsView(show, tenant) {
  const box = errorBox();
  const listed = h('div');
  const [{ providers }, { agents }] = await Promise.all([methodsOf(tenant), api('GET', '/v1/auth-core/connections/agents')]);
  const named = (id) => { const a = agents.find((x) => x.id === id); return a ? a.name : id; };
  const draw = async () => {
    const { connections } = await api('GET', '/v1/auth-core/connections');
    listed.replaceChildren(table('Connected accounts', ['Provider', 'Agents', 'Status', 'Token expires', 'Connected', ''], connections, (c) => [
      c.providerName, c.agents.map(named).join(', '), c.status === 'connected' ? 'Connected' : 'Sign in again to reconnect',
      when(c.accessTokenExpiresAt, 'unknown'), when(c.createdAt),
      h('button', {
        type: 'button',
        class: 'danger',
        'aria-label': `Revoke ${c.providerName}`,
        onclick: async () => {
          if (!await confirm(`Revoke the connection with ${c.providerName}? Its agents lose access at once.`)) return;
          try {
            const got = await api('DELETE', `/v1/auth-core/connections/${c.id}`);
            box.clear();
            await draw();
            listed.append(h('p', { role: 'status' }, got.upstreamRevoked ? `Revoked here and at ${c.providerName}.` : 'Revoked here.'));
          } catch (err) { box.show(err); }
        },
      }, 'Revoke'),
    ]));
  };
  const provider = select('Provider', providers.map((p) => ({ value: p.id, label: p.name })));
  const checks = agents.map((a) => h('label', { class: 'check' }, h('input', { type: 'checkbox', value: a.id }), `${a.name} (${a.id})`));
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const id = provider.querySelector('select').value;
        const chosen = checks.map((c) => c.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
        try {
          await api('POST', `/v1/auth-core/connections/${id}`, { agents: chosen });
        } catch (err) {
          if (err.code !== 'sign_in_first') throw err;
          // Their tokens come with a sign-in with the provider: go through it, then back here.
          const p = providers.find((x) => x.id === id);
          location.assign(`${p.startUrl}?redirect=${encodeURIComponent(`/console?tenant=${tenant}#/connections`)}`);
          return;
        }
        await draw();
      });
    },
  }, provider, h('fieldset', {}, h('legend', {}, 'Agents that may use it'), checks.length ? checks : h('p', { class: 'muted' }, 'Your project has no agents yet.')),
  box, h('button', { type: 'submit' }, 'Connect'));
  await draw();
  show('Connected accounts', h('p', {}, 'Agents of this project call these accounts for you with tokens kept here: you never hand them a password or a key.'),
    listed, ...(providers.length ? [h('h2', {}, 'Connect an account'), form] : []));
}
