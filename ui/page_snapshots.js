// Workspace snapshots (docs/snapshots.md). The tenant filter is the API's
// (GET /v1/snapshots?tenant=): another tenant or * only for an admin key; any
// other key is answered 403, shown here.
import { api } from './api.js';
import { el, clear } from './dom.js';
import { showControls, bytes } from './text.js';

export async function snapshotsPage(view) {
  const body = el('tbody', {});
  const note = el('p', { class: 'muted' });
  const filters = el('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); load(); } },
    el('label', {}, 'Tenant ', el('input', { name: 'tenant', placeholder: 'own; name, id or * (admin)', autocomplete: 'off' })),
    el('button', { type: 'submit' }, 'Filter'));
  view.append(el('h1', {}, 'Snapshots'), filters,
    el('table', { class: 'list', id: 'snapshots' },
      el('thead', {}, el('tr', {}, ['Digest', 'Tenant', 'Source', 'Entries', 'Size', 'Created', 'Expires'].map((h) => el('th', {}, h)))),
      body),
    note);
  async function load() {
    clear(body);
    const tenant = filters.elements.tenant.value.trim();
    let page;
    try {
      page = await api('/v1/snapshots' + (tenant ? '?' + new URLSearchParams({ tenant }).toString() : ''));
    } catch (err) {
      note.className = 'error';
      note.textContent = `${err.code || 'error'}: ${err.message}`;
      return;
    }
    note.className = 'muted';
    page.snapshots.forEach((s) => body.appendChild(el('tr', { class: 'snapshot' },
      el('td', { class: 'hash' }, showControls(String(s.digest), false)),
      el('td', { title: String(s.tenant || '') }, showControls(String(s.tenant_name || s.tenant || ''), false)),
      el('td', {}, showControls(String(s.source || '—'), false)),
      el('td', {}, String(s.entries ?? '—')), el('td', {}, bytes(s.size_bytes)),
      el('td', {}, showControls(String(s.created_at || '—'), false)), el('td', {}, showControls(String(s.expires_at || '—'), false)))));
    note.textContent = page.snapshots.length ? `${page.snapshots.length} shown` + (page.scope === 'all_tenants' ? ' (every tenant)' : '')
      : 'No snapshots.';
  }
  await load();
}
