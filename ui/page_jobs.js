// Jobs: the list with filters, and a search by id. Every filter is a query of
// the API (GET /v1/jobs): tenant (another tenant or * only for an admin key;
// any other key is answered 403, shown here), image, state, outcome, time.
import { api, seg } from './api.js';
import { el, table, clear } from './dom.js';
import { showControls } from './text.js';
import { tenantCell } from './tenant_list.js';

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
    el('label', {}, 'Tenant ', el('input', { name: 'tenant', placeholder: 'own; name, id or * (admin)', autocomplete: 'off' })),
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
    const tenant = f.tenant.value.trim(), image = f.image.value.trim();
    if (tenant) q.set('tenant', tenant);
    if (image) q.set('image', image);
    if (cursor) q.set('cursor', cursor);
    let page;
    try {
      page = await api('/v1/jobs?' + q.toString());
    } catch (err) {
      more.hidden = true;
      note.className = 'error';
      note.textContent = `${err.code || 'error'}: ${err.message}`;
      return;
    }
    note.className = 'muted';
    cursor = page.next_cursor;
    more.hidden = !cursor;
    page.jobs.forEach((j) => {
      const img = j.image ? String(j.image) : '';
      body.appendChild(el('tr', { class: 'job' },
        el('td', {}, el('a', { href: '#/jobs/' + encodeURIComponent(j.id) }, showControls(j.id, false))),
        el('td', {}, el('span', { class: 'state ' + stateClass(j.state) }, String(j.state))),
        el('td', {}, j.outcome ? el('span', { class: 'outcome ' + outcomeClass(j.outcome) }, String(j.outcome)) : '—'),
        tenantCell(j),
        el('td', {}, img ? showControls(img, false) : '—'),
        el('td', {}, String(j.created_at))));
    });
    note.textContent = `${body.children.length} shown` + (page.scope === 'all_tenants' ? ' (every tenant)' : '');
  }
  await load(true);
}

export const stateClass = (s) => (['queued', 'running', 'finished'].includes(s) ? s : 'other');
export const outcomeClass = (o) => (o === 'succeeded' ? 'good' : o === 'cancelled' ? 'neutral' : 'bad');
