// Usage of the key's tenant over a time range: GET /v1/usage as it is on main
// (totals and jobs by outcome). Per-day and per-tenant charts with cost wait
// for the usage API's group_by and rate card (docs/dashboard.md).
import { api } from './api.js';
import { el, fields, table, section } from './dom.js';
import { showControls, bytes, ms } from './text.js';

export async function usagePage(view) {
  const range = el('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); show(); } },
    el('label', {}, 'From ', el('input', { name: 'from', type: 'date' })),
    el('label', {}, 'To ', el('input', { name: 'to', type: 'date' })),
    el('button', { type: 'submit' }, 'Show'));
  const out = el('div', {});
  view.append(el('h1', {}, 'Usage'), range, out);
  async function show() {
    const q = new URLSearchParams();
    if (range.elements.from.value) q.set('from', range.elements.from.value);
    if (range.elements.to.value) q.set('to', range.elements.to.value + 'T23:59:59.999Z');
    const u = await api('/v1/usage?' + q.toString());
    while (out.firstChild) out.removeChild(out.firstChild);
    const s = u.storage || {};
    out.append(fields([
      ['Tenant', showControls(String(u.tenant), false)], ['Jobs', String(u.jobs)],
      ['CPU', ms(u.cpu_ms)], ['Wall', ms(u.wall_ms)], ['Peak memory (sum)', bytes(u.peak_memory_bytes)],
      ['Stored', `${bytes(s.total_bytes)} of ${bytes(s.quota_bytes)} (artifacts ${bytes(s.artifacts_bytes)}, snapshots ${bytes(s.snapshots_bytes)}, uploads ${bytes(s.uploads_bytes)})`],
    ]));
    const by = u.by_outcome && typeof u.by_outcome === 'object' ? Object.entries(u.by_outcome) : [];
    out.append(section('Jobs by outcome', table(['Outcome', 'Jobs'],
      by.map(([k, v]) => el('tr', {}, el('td', {}, showControls(k, false)), el('td', {}, String(v)))))));
    out.append(el('p', { class: 'muted' },
      'Charts per day and tenant with cost need GET /v1/usage?group_by= and the rate card, which this server does not offer yet.'));
  }
  await show();
}
