// A list page whose tenant filter is the API's (?tenant=): another tenant or
// * only for an admin key; any other key is answered 403, shown as the
// page's error. Used by the sessions and snapshots pages; every value from
// the API goes through the page's own row() as text.
import { api } from './api.js';
import { el, clear } from './dom.js';
import { showControls } from './text.js';

// The Tenant column's cell: the tenant's name, its id as the title.
export function tenantCell(item) {
  return el('td', { title: String(item.tenant || '') }, showControls(String(item.tenant_name || item.tenant || ''), false));
}

// title: the heading; id: the table's id; path: the list's API path;
// field: the array in the answer; headers; row(item) -> <tr>; empty: the note for none.
export async function tenantListPage(view, { title, id, path, field, headers, row, empty }) {
  const body = el('tbody', {});
  const note = el('p', { class: 'muted' });
  const filters = el('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); load(); } },
    el('label', {}, 'Tenant ', el('input', { name: 'tenant', placeholder: 'own; name, id or * (admin)', autocomplete: 'off' })),
    el('button', { type: 'submit' }, 'Filter'));
  view.append(el('h1', {}, title), filters,
    el('table', { class: 'list', id },
      el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
      body),
    note);
  async function load() {
    clear(body);
    const tenant = filters.elements.tenant.value.trim();
    let page;
    try {
      page = await api(path + (tenant ? '?' + new URLSearchParams({ tenant }).toString() : ''));
    } catch (err) {
      note.className = 'error';
      note.textContent = `${err.code || 'error'}: ${err.message}`;
      return;
    }
    note.className = 'muted';
    const items = page[field];
    items.forEach((item) => body.appendChild(row(item)));
    note.textContent = items.length ? `${items.length} shown` + (page.scope === 'all_tenants' ? ' (every tenant)' : '') : empty;
  }
  await load();
}
