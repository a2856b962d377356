// One job: what ran, in which boundary, what came in and out, why it ended,
// the timing as a bar, cleanup; live output while it runs; cancel, download,
// publish. Everything in a record came from (or was shaped by) the job, so
// it is shown as text only, with control characters escaped.
import { api, download, stream, seg, ApiError } from './api.js';
import { el, fields, table, section } from './dom.js';
import { showControls, bytes, ms, phaseSegments, streamText } from './text.js';
import { outcomeClass } from './page_jobs.js';

const t = (v) => showControls(v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));
const pre = (text, cls = '') => el('pre', { class: cls }, showControls(text));

export async function jobPage(view, id) {
  const job = await api('/v1/jobs/' + seg(id));
  const rec = job.record && typeof job.record === 'object' ? job.record : null;
  const message = el('p', { class: 'message', role: 'status' });
  const say = (text, bad = false) => { message.textContent = text; message.className = bad ? 'message error' : 'message'; };

  view.append(el('h1', {}, 'Job ', el('code', {}, showControls(job.id, false))));
  const actions = el('div', { class: 'actions' },
    el('button', { type: 'button', onclick: () => window.dispatchEvent(new HashChangeEvent('hashchange')) }, 'Refresh'));
  if (job.state !== 'finished') {
    actions.appendChild(el('button', { type: 'button', id: 'cancel', class: 'danger', onclick: async (e) => {
      e.target.disabled = true;
      try {
        await api('/v1/jobs/' + seg(job.id) + '/cancel', { method: 'POST' });
        say('Cancel requested.');
      } catch (err) { say(`Cancel refused: ${err.message}`, true); e.target.disabled = false; }
    } }, 'Cancel'));
  }
  view.append(actions, message);

  view.append(fields([
    ['State', el('span', { class: 'state', id: 'state' }, t(job.state))],
    ['Outcome', el('span', { id: 'outcome', class: job.outcome ? 'outcome ' + outcomeClass(job.outcome) : '' }, t(job.outcome))],
    ['Reason', rec ? t(rec.reason || '') : undefined],
    ['Tenant', t(job.tenant)], ['Key', t(job.key_id)],
    ['Created', t(job.created_at)], ['Started', t(job.started_at)], ['Finished', t(job.finished_at)],
  ]));

  let stop = null;
  if (job.state !== 'finished') stop = liveOutput(view, job.id, say);
  if (!rec) {
    view.append(el('p', { class: 'muted' }, 'The record is written when the job ends.'));
    return stop;
  }

  view.append(section('Command', pre(Array.isArray(rec.command) ? rec.command.join(' ') : t(rec.command), 'code')));
  if (typeof job.code === 'string') view.append(section('Code', pre(job.code, 'code job-code')));
  const img = rec.image || {};
  view.append(section('Image and profile', fields([
    ['Image', t(img.name)], ['Digest', t(img.digest)], ['Manifest digest', t(img.manifest_digest)],
    ['Pinned', t(img.pinned)], ['Requested', t(img.requested)],
    ['Profile', t(rec.profile && rec.profile.name)], ['Profile digest', t(rec.profile && rec.profile.digest)],
  ])));
  view.append(section('Result', fields([
    ['Outcome', t(rec.outcome)], ['Reason', t(rec.reason)], ['Exit code', t(rec.exit_code)], ['Signal', t(rec.signal)],
    ['Limits hit', t(rec.limits_hit)],
    ['Wall', ms(rec.usage && rec.usage.wall_ms)], ['CPU', ms(rec.usage && rec.usage.cpu_ms)],
    ['Peak memory', bytes(rec.usage && rec.usage.peak_memory_bytes)],
  ])));
  view.append(section('Timing', timingBar(rec.timing, 'sandbox'), timingBar(rec.service_timing, 'service')));

  view.append(section('Inputs', files(rec.inputs, ['name', 'size', 'type', 'sha256'])));
  view.append(section('Outputs', outputs(job, rec, say)));
  view.append(section('Checks', list(rec.checks, 'No checks were declared.')));
  view.append(section('Network attempts', list(rec.network, 'None: the job made no connection attempt the boundary saw.'),
    rec.network_dropped ? el('p', { class: 'muted' }, `${rec.network_dropped} more attempts were not recorded.`) : null));
  const c = rec.cleanup || {};
  view.append(section('Cleanup', fields([
    ['Complete', el('span', { id: 'cleanup', class: c.ok ? 'good' : 'bad' }, c.ok ? 'yes' : 'no')],
    ['Removed', t((c.removed || []).join(', '))],
    // A service job's sandbox is removed right after its record is stored (docs/job-record.md).
    ['Removed after the record', t((c.after_record || []).join(', ') || 'nothing')],
    ['Failed', t((c.failed || []).join(', ') || 'nothing')],
  ])));
  view.append(section('Output streams',
    el('h3', {}, 'stdout', rec.stdout && rec.stdout.truncated ? ' (truncated)' : ''), pre(streamText(rec.stdout), 'out stdout'),
    el('h3', {}, 'stderr', rec.stderr && rec.stderr.truncated ? ' (truncated)' : ''), pre(streamText(rec.stderr), 'out stderr')));
  view.append(section('Policy', pre(JSON.stringify(rec.policy, null, 2), 'code')));
  view.append(section('Sandbox', pre(JSON.stringify(rec.sandbox, null, 2), 'code')));
  return stop;
}

function timingBar(timing, label) {
  const parts = phaseSegments(timing);
  if (!parts.length) return null;
  const bar = el('div', { class: 'bar', role: 'img', title: label });
  const legend = el('ul', { class: 'legend' });
  parts.forEach((p, i) => {
    const piece = el('span', { class: 'seg c' + (i % 8), title: `${p.name}: ${ms(p.ms)}` });
    piece.style.flexGrow = String(Math.max(p.share, 0.002));  // CSSOM: allowed by the CSP, unlike style=""
    bar.appendChild(piece);
    legend.appendChild(el('li', {}, el('span', { class: 'swatch c' + (i % 8) }), `${showControls(p.name, false)} ${ms(p.ms)}`));
  });
  return el('div', { class: 'timing' }, el('h3', {}, label), bar, legend);
}

function files(list, keys) {
  if (!Array.isArray(list) || !list.length) return el('p', { class: 'muted' }, 'None.');
  return table(keys, list.map((f) => el('tr', {}, keys.map((k) =>
    el('td', { class: k === 'sha256' ? 'hash' : '' }, k === 'size' ? bytes(f[k]) : t(f[k]))))));
}

function outputs(job, rec, say) {
  const list = rec.outputs;
  if (!Array.isArray(list) || !list.length) return el('p', { class: 'muted' }, 'None.');
  const keys = ['name', 'size', 'type', 'sha256', 'verdict', 'reason'];
  return el('table', { class: 'list', id: 'outputs' },
    el('thead', {}, el('tr', {}, [...keys, ''].map((h) => el('th', {}, h)))),
    el('tbody', {}, list.map((f) => {
      const accepted = f.verdict === 'accepted';
      const path = '/v1/jobs/' + seg(job.id) + '/outputs/' + seg(f.name);
      return el('tr', { class: 'output' },
        keys.map((k) => el('td', { class: k === 'sha256' ? 'hash' : k === 'verdict' ? (accepted ? 'good' : 'bad') : '' },
          k === 'size' ? bytes(f[k]) : t(f[k]))),
        // Only a job that succeeded keeps its accepted outputs (docs/service.md).
        el('td', {}, accepted && rec.outcome === 'succeeded' ? [
          el('button', { type: 'button', class: 'download', onclick: () => save(path, f, say) }, 'Download'),
          el('button', { type: 'button', class: 'publish', onclick: async (e) => {
            try {
              const p = await api(path + '/publish', { method: 'POST' });
              say(`Published ${showControls(f.name, false)} (sha256 ${p.sha256}).`);
              e.target.disabled = true;
            } catch (err) {
              say(err instanceof ApiError && err.status === 403 ? `This key may not publish: ${err.message}` : `Publish failed: ${err.message}`, true);
            }
          } }, 'Publish')] : null));
    })));
}

// Saved through a blob of a neutral type; the file name is only a suggestion
// the browser sanitizes. The hash the API sent is compared with the record's.
async function save(path, f, say) {
  try {
    const { blob, sha256 } = await download(path);
    if (sha256 && f.sha256 && sha256 !== f.sha256) return say('The download does not match the record\'s sha256.', true);
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;  // a blob: URL of this origin, made here, never job text
    a.download = String(f.name).replace(/[^A-Za-z0-9._-]/g, '_');
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    say(`Downloaded ${showControls(f.name, false)}.`);
  } catch (err) { say(`Download failed: ${err.message}`, true); }
}

function list(items, empty) {
  if (!Array.isArray(items) || !items.length) return el('p', { class: 'muted' }, empty);
  const keys = [...new Set(items.flatMap((i) => (i && typeof i === 'object' ? Object.keys(i) : [])))];
  return table(keys, items.map((i) => el('tr', {}, keys.map((k) => el('td', {}, t(i && i[k]))))));
}

function liveOutput(view, id, say) {
  const out = el('pre', { class: 'out live', id: 'live' });
  const status = el('p', { class: 'muted', id: 'live-status' }, 'Connecting to the live output…');
  view.append(section('Live output', status, out));
  const ctl = new AbortController();
  stream('/v1/jobs/' + seg(id) + '/events', (e) => {
    if (e.event === 'stdout' || e.event === 'stderr') {
      let chunk = '';
      try { chunk = JSON.parse(e.data).text; } catch { chunk = '(unreadable event)'; }
      const span = el('span', { class: e.event }, showControls(chunk));
      out.appendChild(span);
      status.textContent = 'Running: output as it comes.';
      document.getElementById('state').textContent = 'running';  // output means it started
    } else if (e.event === 'end') {
      let end = {};
      try { end = JSON.parse(e.data); } catch { /* shown as unknown */ }
      status.textContent = `Ended: ${showControls(String(end.state || '?'), false)}, ${showControls(String(end.outcome || '?'), false)}.`;
      document.getElementById('state').textContent = showControls(String(end.state || '?'), false);
      document.getElementById('outcome').textContent = showControls(String(end.outcome || '?'), false);
      setTimeout(() => { if (!ctl.signal.aborted) window.dispatchEvent(new HashChangeEvent('hashchange')); }, 300);
    }
  }, ctl.signal).catch((err) => {
    if (!ctl.signal.aborted) { status.textContent = ''; say(`Live output stopped: ${err.message}`, true); }
  });
  return () => ctl.abort();
}
