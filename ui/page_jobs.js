// Jobs: the list with filters, and a search by id. State, outcome and time
// are filters of the API (GET /v1/jobs); tenant and image are not, so they
// filter the loaded page by each job's record (docs/dashboard.md).
import { api, seg } from './api.js';
import { el, table, clear } from './dom.js';
import { showControls } from './text.js';

const OUTCOMES = ['succeeded', 'failed', 'timed_out', 'cpu_limit', 'memory_limit', 'output_rejected',
                  'input_rejected', 'cancelled', 'sandbox_error'];

function select(name, label, options) {
  return el('label', {}, label, el('select', { name }, el('option', { value: '' }, 'any'),
    options.map((o) => el('option', { value: o }, o))));
}

// The time of a datetime-local field as the API's RFC 3339 text (UTC), or "".
function rfc3339(value) {
  if (!value) return '';
  const t = new Date(value);
  return Number.isNaN(t.getTime()) ? '' : t.toISOString();
}

export async function jobsPage(view) {
  const search = el('form', { class: 'search', onsubmit: (e) => {
    e.preventDefault();
    const id = search.elements.id.value.trim();
    if (id) location.hash = '#/jobs/' + encodeURIComponent(id);
  } }, el('label', {}, 'Job id ', el('input', { name: 'id', placeholder: 'job id', autocomplete: 'off' })),
  el('button', { type: 'submit' }, 'Open'));

  const filters = el('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); load(true); } },
    select('state', 'State ', ['queued', 'running', 'finished']),
    select('outcome', 'Outcome ', OUTCOMES),
    el('label', {}, 'Tenant ', el('input', { name: 'tenant', placeholder: 'tenant id', autocomplete: 'off' })),
    el('label', {}, 'Image ', el('input', { name: 'image', placeholder: 'image name', autocomplete: 'off' })),
    el('label', {}, 'From ', el('input', { name: 'from', type: 'datetime-local' })),
    el('label', {}, 'To ', el('input', { name: 'to', type: 'datetime-local' })),
    el('button', { type: 'submit' }, 'Filter'));

  const body = el('tbody', {});
  const more = el('button', { type: 'button', hidden: true, onclick: () => load(false) }, 'More');
  const note = el('p', { class: 'muted' });
  view.append(el('h1', {}, 'Jobs'), search, filters,
    el('table', { class: 'list', id: 'jobs' },
      el('thead', {}, el('tr', {}, ['Id', 'State', 'Outcome', 'Tenant', 'Image', 'Created'].map((h) => el('th', {}, h)))),
      body),
    more, note);

  let cursor = null;
  async function load(fresh) {
    if (fresh) { clear(body); cursor = null; }
    const f = filters.elements;
    const q = new URLSearchParams({ limit: '25' });
    if (f.state.value) q.set('state', f.state.value);
    if (f.outcome.value) q.set('outcome', f.outcome.value);
    if (rfc3339(f.from.value)) q.set('created_after', rfc3339(f.from.value));
    if (rfc3339(f.to.value)) q.set('created_before', rfc3339(f.to.value));
    if (cursor) q.set('cursor', cursor);
    const page = await api('/v1/jobs?' + q.toString());
    cursor = page.next_cursor;
    more.hidden = !cursor;
    const details = await mapLimited(page.jobs, 4, (j) => api('/v1/jobs/' + seg(j.id)).catch(() => null));
    const tenant = f.tenant.value.trim(), image = f.image.value.trim();
    let shown = 0;
    page.jobs.forEach((j, i) => {
      const d = details[i] || {};
      const img = d.record && d.record.image ? String(d.record.image.name || '') : '';
      if (tenant && String(d.tenant || '') !== tenant) return;
      if (image && !img.includes(image)) return;
      shown++;
      body.appendChild(el('tr', { class: 'job' },
        el('td', {}, el('a', { href: '#/jobs/' + encodeURIComponent(j.id) }, showControls(j.id, false))),
        el('td', {}, el('span', { class: 'state ' + stateClass(j.state) }, String(j.state))),
        el('td', {}, j.outcome ? el('span', { class: 'outcome ' + outcomeClass(j.outcome) }, String(j.outcome)) : '—'),
        el('td', {}, showControls(d.tenant || '', false)),
        el('td', {}, img ? showControls(img, false) : '—'),
        el('td', {}, String(j.created_at))));
    });
    note.textContent = `${body.children.length} shown` + (tenant || image ? ` (${page.jobs.length - shown} of this page hidden by the tenant or image filter)` : '');
  }
  await load(true);
}

export const stateClass = (s) => (['queued', 'running', 'finished'].includes(s) ? s : 'other');
export const outcomeClass = (o) => (o === 'succeeded' ? 'good' : o === 'cancelled' ? 'neutral' : 'bad');

async function mapLimited(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) { const i = next++; out[i] = await fn(items[i]); }
  }));
  return out;
}
