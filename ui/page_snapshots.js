// Workspace snapshots (docs/snapshots.md). The tenant filter is the API's
// (GET /v1/snapshots?tenant=; tenant_list.js).
import { el } from './dom.js';
import { showControls, bytes } from './text.js';
import { tenantListPage, tenantCell } from './tenant_list.js';

export async function snapshotsPage(view) {
  await tenantListPage(view, {
    title: 'Snapshots', id: 'snapshots', path: '/v1/snapshots', field: 'snapshots', empty: 'No snapshots.',
    headers: ['Digest', 'Tenant', 'Source', 'Entries', 'Size', 'Created', 'Expires'],
    row: (s) => el('tr', { class: 'snapshot' },
      el('td', { class: 'hash' }, showControls(String(s.digest), false)),
      tenantCell(s),
      el('td', {}, showControls(String(s.source || '—'), false)),
      el('td', {}, String(s.entries ?? '—')), el('td', {}, bytes(s.size_bytes)),
      el('td', {}, showControls(String(s.created_at || '—'), false)), el('td', {}, showControls(String(s.expires_at || '—'), false))),
  });
}
