// Pure helpers for showing untrusted text and numbers (no DOM).

// Control characters as visible escapes: an ANSI colour code a job printed
// shows as "\x1b[31m", not as colour; bidirectional overrides and zero-width
// characters as "\u202e", so a name cannot pretend to be another. Newlines and
// tabs stay (only when keepNewlines).
export function showControls(s, keepNewlines = true) {
  return String(s).replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => {
    if (keepNewlines && (c === '\n' || c === '\t')) return c;
    const code = c.charCodeAt(0);
    return code < 0x100 ? '\\x' + code.toString(16).padStart(2, '0') : '\\u' + code.toString(16).padStart(4, '0');
  });
}

export function bytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? String(n) : n.toFixed(1)) + ' ' + units[i];
}

export function ms(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  return n >= 1000 ? (n / 1000).toFixed(2) + ' s' : n.toFixed(n < 10 ? 2 : 0) + ' ms';
}

// The phases in the order a job goes through them: the service's
// (service_timing: queue, prepare, run, finish; src/service/job_service.cc)
// and the sandbox's (timing: take or prepare, admit, restore, egress, start,
// run, stop, collect; src/jobs/run_job.cc), with checks, store and cleanup
// where older records had them. The stored record's JSON has its keys in
// alphabetical order, so the order is this list's, not the object's.
export const PHASE_ORDER = ['queue', 'take', 'prepare', 'admit', 'restore', 'egress', 'start', 'run', 'stop',
                            'collect', 'checks', 'finish', 'store', 'cleanup'];

// The record's timing ({admit_ms: 1.2, ...}) as bar segments: name, ms and
// share of the total (0..1), in PHASE_ORDER (a phase it does not name comes
// after those, by name); non-numbers are skipped.
export function phaseSegments(timing) {
  if (!timing || typeof timing !== 'object') return [];
  const rank = (name) => {
    const i = PHASE_ORDER.indexOf(name);
    return i < 0 ? PHASE_ORDER.length : i;
  };
  const parts = Object.entries(timing)
    .filter(([, v]) => typeof v === 'number' && Number.isFinite(v) && v >= 0)
    .map(([k, v]) => ({ name: k.replace(/_ms$/, ''), ms: v }))
    .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const total = parts.reduce((a, p) => a + p.ms, 0);
  return parts.map((p) => ({ ...p, share: total > 0 ? p.ms / total : 0 }));
}

// Prometheus text format 0.0.4 -> [{name, labels: {..}, value}]; comments and
// malformed lines are skipped.
export function parseMetrics(text) {
  const out = [];
  for (const line of String(text).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

// Standard base64 only (a figure becomes a data: URL of an image/png).
export function isBase64(s) {
  return typeof s === 'string' && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
}

// A record's stream {text, encoding}: base64 decoded as UTF-8 (invalid bytes
// become U+FFFD).
export function streamText(stream) {
  if (!stream || typeof stream.text !== 'string') return '';
  if (stream.encoding !== 'base64') return stream.text;
  try {
    const raw = atob(stream.text);
    const buf = Uint8Array.from(raw, (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: false }).decode(buf);
  } catch {
    return '(undecodable base64)';
  }
}
