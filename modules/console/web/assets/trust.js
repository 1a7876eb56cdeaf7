// What a project trusts besides authcore (SPEC §22): issuers whose JWTs its resources take
// as grants — workload platforms and enterprise identity providers — and the other
// authorization servers its people may get ID-JAGs for.
import { api } from './api.js';
import { confirm, errorBox, field, h, select, submitting, table, when } from './ui.js';

const words = (input) => input.querySelector('input').value.split(/[\s,]+/).filter(Boolean);
const value = (input) => input.querySelector('input, select').value.trim();

// trustView is the Trust screen of project p; show draws it.
export async function trustView(p, show) {
  const issuers = `/v1/projects/${p.id}/trust/issuers`;
  const servers = `/v1/projects/${p.id}/trust/authorization-servers`;
  const listBox = errorBox();
  const issuerList = h('div', {});
  const serverList = h('div', {});
  const remove = (what, path) => h('button', {
    type: 'button', class: 'danger',
    onclick: async () => {
      if (!(await confirm(what))) return;
      try { await api('DELETE', path); await reload(); } catch (err) { listBox.show(err); }
    },
  }, 'Remove');
  const reload = async () => {
    try {
      const [a, b] = await Promise.all([api('GET', issuers), api('GET', servers)]);
      issuerList.replaceChildren(table('Trusted issuers', ['Issuer', 'Kind', 'Accepts', 'Scopes', 'Added', ''], a.issuers, (i) => [
        h('span', {}, i.name, h('br', {}), h('code', { class: 'muted' }, i.issuer)),
        i.kind === 'workload' ? 'Workloads' : 'Enterprise ID-JAGs',
        i.kind === 'workload'
          ? h('span', {}, 'aud ', h('code', {}, i.audience), ', ', i.subjectClaim, ' ', h('code', {}, i.subjectPattern || '*'))
          : (i.trustEmail ? 'linked identities, then email' : 'linked identities'),
        i.scopes.length ? i.scopes.join(' ') : h('span', { class: 'muted' }, 'none'),
        when(i.createdAt),
        remove(`Stop trusting ${i.issuer}? Tokens it granted stop working at once.`, `${issuers}/${i.id}`),
      ]));
      serverList.replaceChildren(table('Authorization servers', ['Issuer', 'Client id there', 'Added', ''], b.authorizationServers, (s) => [
        h('code', {}, s.issuer), h('code', {}, s.clientId), when(s.createdAt),
        remove(`Stop issuing ID-JAGs for ${s.issuer}?`, `${servers}/${s.id}`),
      ]));
    } catch (err) { listBox.show(err); }
  };

  const box = errorBox();
  const kind = select('Kind', [{ value: 'workload', label: 'Workload platform (Kubernetes, SPIFFE, CI)' }, { value: 'enterprise', label: 'Enterprise identity provider (ID-JAG)' }]);
  const issuer = field('Issuer URL', { type: 'url', required: true, placeholder: 'https://oidc.eks.eu-west-1.amazonaws.com/id/…' });
  const name = field('Issuer name', { maxlength: '100' });
  const jwksUri = field('JWKS URL', { type: 'url', placeholder: 'from its discovery document when empty' });
  const audience = field('Audience', { placeholder: 'the aud its tokens carry' });
  const subjectClaim = field('Subject claim', { placeholder: 'sub' });
  const subjectPattern = field('Subject pattern', { placeholder: 'system:serviceaccount:payments:* (* for every subject)' });
  const scopes = field('Allowed scopes', { placeholder: 'mcp:tools files:read' });
  const trustEmail = h('div', { class: 'field' }, h('label', {}, h('input', { type: 'checkbox', name: 'Trust its email' }), ' Map people by the email it asserts'));
  const workloadOnly = [audience, subjectClaim, subjectPattern];
  const sync = () => {
    const workload = value(kind) === 'workload';
    for (const f of workloadOnly) f.hidden = !workload;
    for (const f of [audience, subjectPattern]) f.querySelector('input').required = workload; // the server wants both
    trustEmail.hidden = workload;
  };
  kind.querySelector('select').addEventListener('change', sync);
  sync();
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const body = { issuer: value(issuer), kind: value(kind), scopes: words(scopes) };
        for (const [k, f] of [['name', name], ['jwksUri', jwksUri]]) if (value(f)) body[k] = value(f);
        if (body.kind === 'workload') {
          for (const [k, f] of [['audience', audience], ['subjectClaim', subjectClaim], ['subjectPattern', subjectPattern]]) if (value(f)) body[k] = value(f);
        } else {
          body.trustEmail = trustEmail.querySelector('input').checked;
        }
        await api('POST', issuers, body);
        form.reset();
        sync();
        await reload();
      });
    },
  }, kind, issuer, name, jwksUri, audience, subjectClaim, subjectPattern, trustEmail, scopes, box, h('button', { type: 'submit' }, 'Trust issuer'));

  const asBox = errorBox();
  const asIssuer = field('Authorization server issuer', { type: 'url', required: true });
  const asClient = field('Client id at that server', { required: true });
  const asForm = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(asForm, asBox, async () => {
        await api('POST', servers, { issuer: value(asIssuer), clientId: value(asClient) });
        asForm.reset();
        await reload();
      });
    },
  }, asIssuer, asClient, asBox, h('button', { type: 'submit' }, 'Allow server'));

  show('Trust',
    h('p', { class: 'muted' }, 'Tokens from these issuers become access tokens for the project\'s resources, with no secret stored: a workload\'s platform token, or an enterprise\'s ID-JAG for one of its people.'),
    form, listBox, issuerList,
    h('h2', {}, 'ID-JAGs for other authorization servers'),
    h('p', { class: 'muted' }, 'The project\'s people may get an ID-JAG from this server for these authorization servers, naming the client given.'),
    asForm, serverList);
  await reload();
}
