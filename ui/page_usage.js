// Usage and its cost over a time range (GET /v1/usage, docs/usage.md): the
// totals under the rate card, then per day and per tenant (an admin key sees
// every tenant) as tables with a bar of each group's cost. The totals are the
// answer's `total` (the scope's: every tenant's for an admin key), so jobs,
// CPU, wall and cost are of the same jobs; the stored bytes are the key's own
// tenant's. Keys and tenant names come from the store: shown as text only.
import { api } from './api.js';
import { el, fields, table, section } from './dom.js';
import { showControls, bytes, ms } from './text.js';

// Decimal strings of the currency ("0.010020") to a number for the bars only;
// the text shown is the API's own string, never a rounded float.
function costValue(group) {
  const n = Number(group && group.cost && group.cost.total);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

function costBar(value, max) {
  const bar = el('span', { class: 'cost-bar' });
  bar.style.width = `${max > 0 ? Math.max(1, Math.round((value / max) * 100)) : 0}%`;  // CSSOM: allowed by the CSP
  return el('span', { class: 'cost-track' }, bar);
}

// A group's label: a tenant's name (the answer's `name`, with the id as the
// cell's title), else its key (a day, an image, a tenant without a name).
function groupLabel(g) {
  const key = showControls(String(g.key), false);
  if (typeof g.name !== 'string' || !g.name) return el('td', {}, key);
  return el('td', { title: key }, showControls(g.name, false));
}

function groupTable(title, u) {
  const groups = Array.isArray(u.groups) ? u.groups : [];
  const currency = showControls(String((u.rates && u.rates.currency) || ''), false);
  const max = Math.max(0, ...groups.map(costValue));
  const rows = groups.map((g) => {
    const use = g.usage || {};
    return el('tr', {},
      groupLabel(g),
      el('td', {}, String(g.jobs ?? 0)), el('td', {}, String(g.sessions ?? 0)),
      el('td', {}, ms(use.cpu_ms)), el('td', {}, ms(use.wall_ms)),
      el('td', {}, showControls(String(use.memory_gb_s ?? ''), false)),
      el('td', {}, bytes(use.egress_bytes)),
      el('td', {}, `${showControls(String((g.cost && g.cost.total) ?? ''), false)} ${currency}`),
      el('td', {}, costBar(costValue(g), max)));
  });
  return section(title, table(['', 'Jobs', 'Sessions', 'CPU', 'Wall', 'Memory GB-s', 'Egress', 'Cost', ''], rows));
}

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
    const byDay = new URLSearchParams(q);
    byDay.set('group_by', 'day');
    const byTenant = new URLSearchParams(q);
    byTenant.set('group_by', 'tenant');
    const [u, t] = await Promise.all([api('/v1/usage?' + byDay.toString()), api('/v1/usage?' + byTenant.toString())]);
    while (out.firstChild) out.removeChild(out.firstChild);
    const s = u.storage || {};
    const total = u.total || {};
    const use = total.usage || {};
    const currency = showControls(String((u.rates && u.rates.currency) || ''), false);
    const everyTenant = u.scope === 'all_tenants';
    out.append(fields([
      ['Scope', everyTenant ? 'every tenant' : "this key's tenant"],
      ['Jobs', String(total.jobs ?? 0)], ['Sessions', String(total.sessions ?? 0)],
      ['CPU', ms(use.cpu_ms)], ['Wall', ms(use.wall_ms)],
      ['Cost', `${showControls(String((total.cost && total.cost.total) ?? ''), false)} ${currency}`],
      [everyTenant ? "Stored (this key's tenant)" : 'Stored',
       `${bytes(s.total_bytes)} of ${bytes(s.quota_bytes)} (artifacts ${bytes(s.artifacts_bytes)}, snapshots ${bytes(s.snapshots_bytes)}, uploads ${bytes(s.uploads_bytes)})`],
    ]));
    out.append(groupTable('Per day', u), groupTable('Per tenant', t));
    const by = u.by_outcome && typeof u.by_outcome === 'object' ? Object.entries(u.by_outcome) : [];
    // by_outcome is the key's own tenant's (docs/usage.md): said so when the rest is every tenant's.
    out.append(section(everyTenant ? "Jobs by outcome (this key's tenant)" : 'Jobs by outcome', table(['Outcome', 'Jobs'],
      by.map(([k, v]) => el('tr', {}, el('td', {}, showControls(k, false)), el('td', {}, String(v)))))));
  }
  await show();
}
