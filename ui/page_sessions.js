// Sessions and their calls (code, status, timing, value, figures). Calls run
// code of the session's owner, so everything here is shown as text; figures
// are PNGs, shown as images from data: URLs only after a base64 check.
import { api, seg } from './api.js';
import { el, fields, section } from './dom.js';
import { showControls, isBase64, ms } from './text.js';
import { tenantListPage, tenantCell } from './tenant_list.js';

const t = (v) => showControls(v === undefined || v === null || v === '' ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

// The tenant filter is the API's (GET /v1/sessions?tenant=; tenant_list.js).
export async function sessionsPage(view) {
  await tenantListPage(view, {
    title: 'Sessions', id: 'sessions', path: '/v1/sessions', field: 'sessions', empty: 'No sessions.',
    headers: ['Id', 'Tenant', 'State', 'Created', 'Closed', 'Close reason'],
    row: (s) => el('tr', { class: 'session' },
      el('td', {}, el('a', { href: '#/sessions/' + encodeURIComponent(s.id) }, showControls(s.id, false))),
      tenantCell(s),
      el('td', {}, t(s.state)), el('td', {}, t(s.created_at)), el('td', {}, t(s.closed_at)), el('td', {}, t(s.close_reason))),
  });
}

export async function sessionPage(view, id) {
  const s = await api('/v1/sessions/' + seg(id));
  view.append(el('h1', {}, 'Session ', el('code', {}, showControls(s.id, false))));
  view.append(fields(Object.entries(s).filter(([k, v]) => k !== 'record' && k !== 'execs' && (typeof v !== 'object' || v === null))
    .map(([k, v]) => [k, t(v)])));
  if (s.policy) view.append(section('Policy', el('pre', { class: 'code' }, showControls(JSON.stringify(s.policy, null, 2)))));
  const { execs } = await api('/v1/sessions/' + seg(id) + '/execs');
  const calls = section('Calls');
  view.append(calls);
  if (!execs.length) calls.appendChild(el('p', { class: 'muted' }, 'No calls yet.'));
  for (const e of execs) {
    let full = e;
    try { full = await api('/v1/sessions/' + seg(id) + '/execs/' + seg(e.id)); } catch { /* the summary is shown */ }
    calls.appendChild(call(full));
  }
}

function call(c) {
  const r = c.result || {};
  const box = el('article', { class: 'call' },
    el('h3', {}, showControls(c.id, false), ' ', el('span', { class: 'muted' }, t(c.kind || r.kind), ' · ', t(c.status || r.status))),
    fields([['Created', t(c.created_at || r.created_at)], ['Started', t(c.started_at || r.started_at)],
            ['Finished', t(c.finished_at || r.finished_at)], ['Took', r.ms !== undefined ? ms(r.ms) : undefined],
            ['Exit code', r.exit_code !== undefined ? t(r.exit_code) : undefined]]));
  for (const k of ['code', 'stdout', 'stderr', 'value', 'html', 'error'])
    if (typeof r[k] === 'string' && r[k]) box.append(el('h4', {}, k), el('pre', { class: 'out' }, showControls(r[k])));
  const figures = Array.isArray(r.figures) ? r.figures : [];
  for (const f of figures) {
    if (!isBase64(f)) { box.append(el('p', { class: 'error' }, 'A figure that is not base64 was not shown.')); continue; }
    const img = document.createElement('img');
    img.src = 'data:image/png;base64,' + f;  // an image/png data: URL: no script can run from it
    img.alt = 'figure';
    box.append(img);
  }
  if (Array.isArray(r.figures_base64_sha256) && r.figures_base64_sha256.length)
    box.append(el('p', { class: 'muted' }, `${r.figures_base64_sha256.length} figure(s), kept by hash only after the session closed.`));
  return box;
}
