// The dashboard's entry: sign-in, navigation (#/page/...), one page at a time.
import { getKey, setKey, clearKey, api, ApiError } from './api.js';
import { el, clear } from './dom.js';
import { jobsPage } from './page_jobs.js';
import { jobPage } from './page_job.js';
import { sessionsPage, sessionPage } from './page_sessions.js';
import { snapshotsPage } from './page_snapshots.js';
import { usagePage } from './page_usage.js';
import { healthPage } from './page_health.js';

const main = document.getElementById('main');
let leave = null;  // the current page's cleanup (an open event stream)

function signInPage(message) {
  document.getElementById('nav').hidden = true;
  document.getElementById('signout').hidden = true;
  document.getElementById('who').textContent = '';
  const input = el('input', { type: 'password', name: 'key', id: 'key', autocomplete: 'off',
                              placeholder: 'alk_...' });
  const status = el('p', { class: 'error', role: 'alert' }, message || '');
  const form = el('form', { class: 'signin', onsubmit: async (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    setKey(key);
    try {
      await api('/v1/jobs?limit=1');
      input.value = '';
      location.hash = '#/jobs';
      route();
    } catch (err) {
      clearKey();
      status.textContent = err instanceof ApiError && err.status === 401
        ? 'That key was not accepted.' : `Sign-in failed: ${err.message}`;
    }
  } },
  el('h1', {}, 'Sign in'),
  el('p', {}, 'An API key of this airlock (airlock keys create). It stays in this tab only.'),
  el('label', { for: 'key' }, 'API key'), input,
  el('button', { type: 'submit' }, 'Sign in'), status);
  clear(main).appendChild(form);
  input.focus();
}

const pages = [
  [/^#\/jobs\/([^/]+)$/, jobPage],
  [/^#\/jobs$/, jobsPage],
  [/^#\/sessions\/([^/]+)$/, sessionPage],
  [/^#\/sessions$/, sessionsPage],
  [/^#\/snapshots$/, snapshotsPage],
  [/^#\/usage$/, usagePage],
  [/^#\/health$/, healthPage],
];

async function route() {
  if (leave) { leave(); leave = null; }
  if (!getKey()) return signInPage();
  document.getElementById('nav').hidden = false;
  document.getElementById('signout').hidden = false;
  const hash = location.hash || '#/jobs';
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('here', hash.startsWith(a.getAttribute('href')));
  const [re, page] = pages.find(([r]) => r.test(hash)) || pages[1];
  const m = re.exec(hash);
  const args = m ? m.slice(1).map((s) => { try { return decodeURIComponent(s); } catch { return s; } }) : [];
  const view = el('div', { class: 'page' });
  clear(main).appendChild(view);
  try {
    leave = (await page(view, ...args)) || null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) { clearKey(); return signInPage('The key is no longer accepted.'); }
    view.appendChild(el('p', { class: 'error', role: 'alert' }, `${err.code || 'error'}: ${err.message}`));
  }
}

document.getElementById('signout').addEventListener('click', () => {
  clearKey();
  location.hash = '';
  route();
});
window.addEventListener('hashchange', route);
route();
