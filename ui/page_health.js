// Health: /healthz and the figures of /metrics (queue, running jobs, jobs by
// outcome, sessions, latencies), both public, and the warm pool from
// GET /v1/pools (with the key).
import { api } from './api.js';
import { el, fields, table, section } from './dom.js';
import { parseMetrics, showControls } from './text.js';

export async function healthPage(view) {
  view.append(el('h1', {}, 'Health'));
  let status = 'unreachable';
  try { status = (await api('/healthz')).status; } catch (err) { status = `error: ${err.message}`; }
  const metrics = parseMetrics(await api('/metrics'));
  const one = (name) => { const m = metrics.find((x) => x.name === name); return m ? String(m.value) : '—'; };
  const mean = (base) => {
    const sum = metrics.find((x) => x.name === base + '_sum'), n = metrics.find((x) => x.name === base + '_count');
    return sum && n && n.value > 0 ? `${(1000 * sum.value / n.value).toFixed(1)} ms over ${n.value}` : '—';
  };
  view.append(fields([
    ['Service', el('span', { id: 'health', class: status === 'ok' ? 'good' : 'bad' }, showControls(String(status), false))],
    ['Queued jobs', el('span', { id: 'queue' }, one('airlock_queue_depth'))],
    ['Running jobs', el('span', { id: 'running' }, one('airlock_running_jobs'))],
    ['Job start latency (mean)', mean('airlock_job_start_latency_seconds')],
    ['Job duration (mean)', mean('airlock_job_duration_seconds')],
  ]));
  const rows = (name, label) => metrics.filter((m) => m.name === name)
    .map((m) => el('tr', {}, el('td', {}, showControls(m.labels[label] || '', false)), el('td', {}, String(m.value))));
  view.append(section('Jobs by outcome', table(['Outcome', 'Jobs'], rows('airlock_jobs_total', 'outcome'))));
  view.append(section('Sessions closed by reason', table(['Reason', 'Sessions'], rows('airlock_sessions_closed_total', 'reason'))));
  view.append(section('Other figures', table(['Metric', 'Value'], metrics
    .filter((m) => m.name.startsWith('airlock_sessions') && !m.name.startsWith('airlock_sessions_closed'))
    .map((m) => el('tr', {}, el('td', {}, showControls(m.name, false)), el('td', {}, String(m.value)))))));
  const pools = await api('/v1/pools');
  view.append(section('Warm pool', fields([
    ['Process', el('span', { id: 'pool', class: pools.process === 'stopped' ? 'bad' : '' }, showControls(String(pools.process), false))],
    ['Warm sandboxes (any command)', String(pools.warm)],
    ['Preloaded Python sandboxes', String(pools.preloaded)],
    ['Images', showControls((pools.images || []).join(', ') || 'host', false)],
  ])));
}
