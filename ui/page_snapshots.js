// The tenant's workspace snapshots (docs/snapshots.md).
import { api } from './api.js';
import { el, table } from './dom.js';
import { showControls, bytes } from './text.js';

export async function snapshotsPage(view) {
  const { snapshots } = await api('/v1/snapshots');
  view.append(el('h1', {}, 'Snapshots'));
  if (!snapshots.length) return void view.append(el('p', { class: 'muted' }, 'No snapshots.'));
  view.append(table(['Digest', 'Source', 'Entries', 'Size', 'Created', 'Expires'], snapshots.map((s) => el('tr', {},
    el('td', { class: 'hash' }, showControls(String(s.digest), false)),
    el('td', {}, showControls(String(s.source || '—'), false)),
    el('td', {}, String(s.entries ?? '—')), el('td', {}, bytes(s.size_bytes)),
    el('td', {}, String(s.created_at || '—')), el('td', {}, String(s.expires_at || '—'))))));
}
