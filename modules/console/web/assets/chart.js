// Usage charts (SPEC §19), drawn here as SVG: no library, no CDN. Every chart carries a
// text alternative — its aria-label, and a table of the same numbers — so assistive
// technology (and the tests) read what the picture shows.
import { h } from './ui.js';

const NS = 'http://www.w3.org/2000/svg';
const OUTCOMES = [['ok', 'ok'], ['denied', 'denied'], ['rate_limited', 'rate limited']];

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

// buckets turns a usage answer into one row per bucket: { t, ok, denied, rate_limited }.
export function buckets(answer, stepMs) {
  const from = new Date(answer.from).getTime();
  const to = new Date(answer.to).getTime();
  const rows = [];
  for (let t = from; t < to; t += stepMs) rows.push({ t, ok: 0, denied: 0, rate_limited: 0 });
  for (const s of answer.series) {
    for (const p of s.points) {
      const i = Math.floor((new Date(p.t).getTime() - from) / stepMs);
      if (rows[i]) rows[i][s.outcome] += p.count;
    }
  }
  return rows;
}

function summary(totals) {
  return `${totals.ok} ok, ${totals.denied} denied, ${totals.rateLimited} rate limited`;
}

// chart draws stacked bars per bucket (ok, denied, rate limited), scaled to the page's
// width by its viewBox, with the totals as its accessible name.
export function chart(answer, stepMs, title) {
  const rows = buckets(answer, stepMs);
  const max = Math.max(1, ...rows.map((r) => r.ok + r.denied + r.rate_limited));
  const W = 600; const H = 120; const bw = W / Math.max(rows.length, 1);
  const bars = [];
  rows.forEach((r, i) => {
    let y = H;
    for (const [key] of OUTCOMES) {
      const v = r[key];
      if (!v) continue;
      const hgt = (v / max) * (H - 4);
      y -= hgt;
      bars.push(svg('rect', { x: (i * bw + 0.5).toFixed(1), y: y.toFixed(1), width: Math.max(bw - 1, 0.5).toFixed(1), height: hgt.toFixed(1), class: `bar-${key}` },
        svg('title', {}, `${new Date(r.t).toLocaleString()}: ${v} ${key.replace('_', ' ')}`)));
    }
  });
  const label = `${title}: ${summary(answer.totals)}`;
  const picture = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': label, preserveAspectRatio: 'none' },
    svg('line', { x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5, class: 'axis' }), ...bars);
  const legend = h('p', { class: 'legend muted' }, ...OUTCOMES.map(([key, name]) => h('span', { class: `key key-${key}` }, name)),
    ` · highest ${max} per bucket`);
  const busy = rows.filter((r) => r.ok + r.denied + r.rate_limited > 0);
  const details = h('details', {}, h('summary', {}, 'Numbers'),
    busy.length === 0 ? h('p', { class: 'muted' }, 'No verifications in this period.')
      : h('table', {}, h('caption', {}, title),
        h('thead', {}, h('tr', {}, ['Time', 'OK', 'Denied', 'Rate limited'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, busy.map((r) => h('tr', {}, h('td', {}, new Date(r.t).toLocaleString()), h('td', {}, String(r.ok)),
          h('td', {}, String(r.denied)), h('td', {}, String(r.rate_limited)))))));
  return h('figure', { class: 'usage' }, picture, h('figcaption', {}, label), legend, details);
}

// mini is a credential's last 24 hours in a line: its counts, and a bar of ok against
// refused whose accessible name says the same.
export function mini(u) {
  const total = u.ok + u.denied + u.rateLimited;
  const text = total === 0 ? 'unused' : `${u.ok} ok · ${u.denied} denied${u.rateLimited ? ` · ${u.rateLimited} rate limited` : ''}`;
  const w = total === 0 ? 0 : (u.ok / total) * 60;
  const bar = svg('svg', { viewBox: '0 0 60 6', width: 60, height: 6, class: 'mini', role: 'img', 'aria-label': `Last 24 hours: ${text}` },
    svg('rect', { x: 0, y: 0, width: 60, height: 6, class: total ? 'bar-denied' : 'bar-none' }),
    svg('rect', { x: 0, y: 0, width: w.toFixed(1), height: 6, class: 'bar-ok' }));
  return h('span', { class: 'mini-usage' }, bar, ' ', text);
}
