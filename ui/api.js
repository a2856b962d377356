// The dashboard's only way to the data: the airlock API on this origin, with
// the operator's key in the Authorization header. The key lives in this tab's
// sessionStorage (gone when the tab closes) and never in a URL.
import { SseParser } from './sse.js';

const KEY = 'airlock.api_key';

export const getKey = () => sessionStorage.getItem(KEY);
export const setKey = (key) => sessionStorage.setItem(KEY, key);
export const clearKey = () => sessionStorage.removeItem(KEY);

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(extra = {}) {
  const h = { ...extra };
  const key = getKey();
  if (key) h.Authorization = 'Bearer ' + key;
  return h;
}

async function failure(res) {
  let code = 'http_' + res.status, message = res.statusText || 'request failed';
  try {
    const body = await res.json();
    if (body && body.error) ({ code, message } = body.error);
  } catch { /* not JSON: keep the status line */ }
  return new ApiError(res.status, String(code), String(message));
}

// path: an API path built by the caller with encodeURIComponent for each part.
export async function api(path, { method = 'GET', body } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
                 credentials: 'omit', cache: 'no-store', redirect: 'error' };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res);
  const type = res.headers.get('Content-Type') || '';
  return type.startsWith('application/json') ? res.json() : res.text();
}

// A file from the API as a Blob of a neutral type: the browser saves it and
// never renders it on this origin, whatever the job put in it.
export async function download(path) {
  const res = await fetch(path, { headers: headers(), credentials: 'omit', cache: 'no-store', redirect: 'error' });
  if (!res.ok) throw await failure(res);
  const data = await res.arrayBuffer();
  return { blob: new Blob([data], { type: 'application/octet-stream' }), sha256: res.headers.get('X-Content-SHA256') };
}

// Server-Sent Events through fetch(): EventSource cannot send the
// Authorization header. Calls onEvent({id, event, data}) until the stream
// ends or signal aborts.
export async function stream(path, onEvent, signal) {
  const res = await fetch(path, { headers: headers({ Accept: 'text/event-stream' }), credentials: 'omit',
                                  cache: 'no-store', redirect: 'error', signal });
  if (!res.ok) throw await failure(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    for (const e of parser.feed(value)) onEvent(e);
  }
}

// "/v1/jobs/" + seg(id): each path segment encoded, so an id or a file name
// can never add a segment, a query or another origin.
export const seg = (s) => encodeURIComponent(String(s));
