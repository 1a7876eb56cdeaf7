// Audit streams (SPEC §28): where a project's audit events go — an HTTPS endpoint, an
// S3-compatible bucket, a syslog server or an OpenTelemetry collector — with each stream's
// status, lag and last error, a test event, replay and resume.
import { api } from './api.js';
import { confirm, errorBox, field, h, secretPanel, select, submitting, table, when } from './ui.js';

// fields are each type's own, in the order SPEC §28 lists them: [name, label, input attributes].
const fields = {
  https: [['url', 'Endpoint URL', { type: 'url', required: true, placeholder: 'https://siem.example.com/authcore' }]],
  syslog: [['host', 'Host', { required: true, placeholder: 'syslog.example.com' }], ['port', 'Port', { type: 'number', required: true, min: 1, max: 65535, value: '6514' }],
    ['tls', 'TLS', { type: 'checkbox', checked: true }]],
  s3: [['endpoint', 'Endpoint', { type: 'url', required: true, placeholder: 'https://s3.eu-west-1.amazonaws.com' }], ['region', 'Region', { required: true, value: 'us-east-1' }],
    ['bucket', 'Bucket', { required: true }], ['prefix', 'Prefix', {}], ['accessKeyId', 'Access key id', { required: true, autocomplete: 'off' }],
    ['secretAccessKey', 'Secret access key', { type: 'password', required: true, autocomplete: 'off' }], ['pathStyle', 'Path-style addressing', { type: 'checkbox' }]],
  otlp: [['url', 'Logs URL', { type: 'url', required: true, placeholder: 'https://otel.example.com/v1/logs' }]],
};

const typeLabels = { https: 'HTTPS', syslog: 'Syslog', s3: 'S3', otlp: 'OpenTelemetry (OTLP/HTTP)' };

// target says where a stream sends, from its own fields (never a secret).
function target(s) {
  switch (s.type) {
    case 'syslog': return `${s.host}:${s.port}${s.tls ? ' (TLS)' : ''}`;
    case 's3': return `${s.endpoint} ${s.bucket}/${s.prefix || ''}`;
    default: return s.url;
  }
}

export async function auditStreamsView(show, project) {
  const base = `/v1/projects/${project}/audit-streams`;
  const listBox = errorBox();
  const list = h('div', {});
  const said = h('p', { role: 'status' });
  const shown = h('div', {});
  const act = (label, fn, cls) => h('button', {
    type: 'button', class: cls, 'aria-label': label,
    onclick: async () => { try { listBox.clear(); await fn(); } catch (err) { listBox.show(err); } },
  }, label.split(' ')[0]);
  const reload = async () => {
    const { streams } = await api('GET', base);
    list.replaceChildren(table('Audit streams', ['Type', 'Target', 'Format', 'Status', 'Lag', 'Last delivered', 'Last error', ''], streams, (s) => [
      typeLabels[s.type], h('code', {}, target(s)), s.format, s.status, String(s.lag),
      s.lastDeliveredId ? h('code', {}, s.lastDeliveredId) : h('span', { class: 'muted' }, 'none'),
      s.lastError || h('span', { class: 'muted' }, 'none'),
      h('span', { class: 'row' },
        act(`Test ${target(s)}`, async () => {
          const got = await api('POST', `${base}/${s.id}/test`);
          said.textContent = got.delivered ? `Test event ${got.eventId} delivered to ${target(s)}.` : `Test event not delivered: ${got.error}`;
        }),
        s.status === 'paused' ? act(`Resume ${target(s)}`, async () => { await api('POST', `${base}/${s.id}/resume`); await reload(); }) : '',
        act(`Replay ${target(s)}`, async () => {
          const from = window.prompt('Replay from an event id or a time (RFC 3339):');
          if (!from) return;
          await api('POST', `${base}/${s.id}/replay`, { from });
          said.textContent = `Replaying to ${target(s)} from ${from}.`;
          await reload();
        }),
        act(`Remove ${target(s)}`, async () => {
          if (!(await confirm(`Remove the stream to ${target(s)}? Nothing more is sent there.`))) return;
          await api('DELETE', `${base}/${s.id}`);
          await reload();
        }, 'danger')),
    ]));
  };
  const box = errorBox();
  const type = select('Type', Object.keys(fields).map((t) => ({ value: t, label: typeLabels[t] })));
  const format = select('Format', [{ value: 'native', label: 'authcore (native)' }, { value: 'ocsf', label: 'OCSF 1.2' }]);
  const actions = field('Actions', { placeholder: 'all (or e.g. user.signin* ai_token.*)' });
  const own = h('div', {});
  const inputs = {};
  const drawOwn = () => {
    const t = type.querySelector('select').value;
    for (const k of Object.keys(inputs)) delete inputs[k];
    own.replaceChildren(...fields[t].map(([name, label, attrs]) => {
      const f = field(label, attrs);
      inputs[name] = f.querySelector('input');
      return f;
    }));
  };
  type.querySelector('select').addEventListener('change', drawOwn);
  drawOwn();
  const form = h('form', {
    onsubmit: (e) => {
      e.preventDefault();
      submitting(form, box, async () => {
        const t = type.querySelector('select').value;
        const body = { type: t, format: format.querySelector('select').value };
        for (const [name, input] of Object.entries(inputs)) {
          if (input.type === 'checkbox') body[name] = input.checked;
          else if (input.type === 'number') body[name] = Number(input.value);
          else if (input.value !== '') body[name] = input.value;
        }
        const globs = actions.querySelector('input').value.split(/[\s,]+/).filter(Boolean);
        if (globs.length) body.filter = { actions: globs };
        const got = await api('POST', base, body);
        shown.replaceChildren(got.secret ? secretPanel(`Signing secret for ${got.url}`, [['Signing secret', got.secret]]) : '');
        form.reset();
        drawOwn();
        await reload();
      });
    },
  }, type, own, format, actions, box, h('button', { type: 'submit' }, 'Add stream'));
  show('Audit streams', h('p', { class: 'muted' }, 'Every audit event of the project, delivered at least once and in order to your SIEM; receivers deduplicate on the event id.'),
    form, shown, listBox, said, list);
  await reload();
}
