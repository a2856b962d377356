// The dashboard (/ui/, docs/dashboard.md) in a real browser against a real
// `airlock serve`: sign-in, a job's page, live output, cancel, the
// hostile-output page, the CSP, and that no request leaves the origin.
// Screenshots go to $AIRLOCK_UI_ARTIFACTS (the build dir; paths printed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServe, call } from './serve.mjs';
import { launch, openPage } from './browser.mjs';
import { ms, PHASE_ORDER } from '../../ui/text.js';

const artifacts = process.env.AIRLOCK_UI_ARTIFACTS || join(process.cwd(), 'artifacts');
mkdirSync(artifacts, { recursive: true });
let serve, chrome;

before(async () => {
  serve = await startServe();
  chrome = await launch();
});
after(async () => {
  if (chrome) await chrome.close();
  if (serve) await serve.stop();
});

async function screenshot(page, name) {
  const path = join(artifacts, name + '.png');
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
}

async function signIn(key = serve.keys.operator) {
  const { page, seen } = await openPage(chrome.browser);
  await page.goto(serve.url + '/ui/', { waitUntil: 'networkidle0' });
  await page.type('#key', key);
  await Promise.all([page.waitForSelector('#jobs'), page.click('form.signin button[type=submit]')]);
  return { page, seen };
}

async function job(body, key = serve.keys.operator) {
  const r = await call(serve.url, key, 'POST', '/v1/jobs', body);
  assert.ok(r.status === 201 || r.status === 200, `job not created: ${r.status} ${r.text}`);
  return r.json;
}

// What every page must keep: nothing went to another origin, the key was in
// no URL, no dialog, no script error, no CSP violation by the dashboard itself.
function assertClean(seen, srv = serve) {
  const origin = new URL(srv.url).origin;
  for (const u of seen.requests) {
    const parsed = new URL(u);
    assert.ok(parsed.origin === origin || parsed.protocol === 'blob:' || parsed.protocol === 'data:',
              `a request left for another origin: ${u}`);
    for (const key of Object.values(srv.keys)) assert.ok(!u.includes(key), `an API key was in a URL: ${u}`);
  }
  assert.deepEqual(seen.dialogs, [], 'a dialog opened');
  assert.deepEqual(seen.errors, [], 'the page threw');
  const csp = seen.console.filter((m) => /Content Security Policy/i.test(m));
  assert.deepEqual(csp, [], 'the dashboard broke its own CSP');
}

test('every /ui/ response carries the CSP, nosniff and its content type; unknown files are 404', async () => {
  for (const [path, type] of [['/ui/', 'text/html'], ['/ui/app.js', 'text/javascript'], ['/ui/style.css', 'text/css'],
                              ['/ui/nothing.js', 'application/json'], ['/ui/..%2Fetc', null]]) {
    const res = await fetch(serve.url + path, { redirect: 'manual' });
    if (type === null) { assert.equal(res.status, 400, path); continue; }
    assert.equal(res.status, path === '/ui/nothing.js' ? 404 : 200, path);
    assert.ok(res.headers.get('content-type').startsWith(type), `${path}: ${res.headers.get('content-type')}`);
    const csp = res.headers.get('content-security-policy');
    assert.match(csp, /default-src 'self'/, path);
    assert.match(csp, /frame-ancestors 'none'/, path);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
  }
  const redirect = await fetch(serve.url + '/ui', { redirect: 'manual' });
  assert.equal(redirect.status, 308);
  assert.equal(redirect.headers.get('location'), '/ui/');
});

test('sign-in keeps the key in sessionStorage only; a wrong key is refused', async () => {
  const { page, seen } = await openPage(chrome.browser);
  await page.goto(serve.url + '/ui/', { waitUntil: 'networkidle0' });
  await page.type('#key', 'alk_not-a-real-key');
  await page.click('form.signin button[type=submit]');
  await page.waitForFunction(() => document.querySelector('form.signin .error').textContent.includes('not accepted'));
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  await page.$eval('#key', (i) => { i.value = ''; });
  await page.type('#key', serve.keys.operator);
  await Promise.all([page.waitForSelector('#jobs'), page.click('form.signin button[type=submit]')]);
  const stored = await page.evaluate(() => ({ session: Object.values(sessionStorage), local: localStorage.length,
                                              cookie: document.cookie, url: location.href }));
  assert.deepEqual(stored.session, [serve.keys.operator]);
  assert.equal(stored.local, 0);
  assert.equal(stored.cookie, '');
  assert.ok(!stored.url.includes(serve.keys.operator));
  assertClean(seen);
  await page.close();
});

test("a job's page: command, image digest, outputs with sha256, timing bar, cleanup; another tenant's job is not shown", async () => {
  const j = await job({ command: ['sh', '-c', 'echo report > /output/report.txt; echo done'], wait_s: 30 });
  assert.equal(j.outcome, 'succeeded', JSON.stringify(j));
  const other = await job({ command: ['sh', '-c', 'echo beta'], wait_s: 30 }, serve.keys.other);
  const { page, seen } = await signIn();
  await page.waitForSelector(`a[href="#/jobs/${j.id}"]`);
  assert.equal(await page.$(`a[href="#/jobs/${other.id}"]`), null, "another tenant's job is listed");
  await Promise.all([page.waitForSelector('#outputs'), page.click(`a[href="#/jobs/${j.id}"]`)]);
  const text = await page.$eval('main', (m) => m.innerText);
  assert.ok(text.includes('sh -c echo report > /output/report.txt; echo done'), 'command shown');
  assert.ok(text.includes(j.record.image.digest), 'image digest shown');
  assert.ok(text.includes(j.record.outputs[0].sha256), 'output sha256 shown');
  assert.ok(text.includes('processes'), 'cleanup shown');
  assert.ok(text.includes('mounts, cgroup, staging'), 'what was removed after the record shown');
  assert.ok((await page.$$('.bar .seg')).length >= 3, 'timing phases drawn as a bar');
  // In the pipeline's order (the stored record's keys are alphabetical): the sandbox is prepared first.
  const phases = await page.$$eval('.timing', (ts) => ts.map((t) => [...t.querySelectorAll('.legend li')]
    .map((li) => li.textContent.split(' ')[0])));
  assert.deepEqual(phases.map((p) => [...p].sort((a, b) => PHASE_ORDER.indexOf(a) - PHASE_ORDER.indexOf(b))), phases,
                   JSON.stringify(phases));
  assert.ok(['prepare', 'take'].includes(phases[0][0]), JSON.stringify(phases));
  assert.deepEqual(phases[1], ['queue', 'prepare', 'run', 'finish'], "the service's phases");
  // Download (through fetch with the key, checked against the record's sha256), then publish.
  await page.click('#outputs button.download');
  await page.waitForFunction(() => document.querySelector('.message').textContent.startsWith('Downloaded'));
  await page.click('#outputs button.publish');
  await page.waitForFunction(() => document.querySelector('.message').textContent.startsWith('Published'));
  assert.match(await page.$eval('.message', (e) => e.textContent), new RegExp(j.record.outputs[0].sha256));
  await screenshot(page, 'job');
  // Another tenant's job by id: the API answers 404, the page says so.
  await page.goto(serve.url + '/ui/#/jobs/' + other.id, { waitUntil: 'networkidle0' });
  await page.waitForSelector('main .error');
  assert.match(await page.$eval('main .error', (e) => e.textContent), /not_found/);
  assertClean(seen);
  await page.close();
});

test('a key without the publish scope is told so by the page', async () => {
  const j = await job({ command: ['sh', '-c', 'echo x > /output/x.txt'], wait_s: 30 });
  const { page, seen } = await signIn(serve.keys.reader);
  await page.goto(serve.url + '/ui/#/jobs/' + j.id, { waitUntil: 'networkidle0' });
  await page.waitForSelector('#outputs button.publish');
  await page.click('#outputs button.publish');
  await page.waitForFunction(() => document.querySelector('.message').textContent.startsWith('This key may not publish'));
  const pubs = await call(serve.url, serve.keys.operator, 'GET', '/v1/jobs/' + j.id);
  assert.equal(pubs.status, 200);
  assertClean(seen);
  await page.close();
});

test('live output while a job runs, then its end; cancel a running job and see it cancelled', async () => {
  const { page, seen } = await signIn();
  const live = await job({ command: ['sh', '-c', 'i=1; while [ $i -le 20 ]; do echo tick $i; i=$((i+1)); sleep 0.3; done'] });
  await page.goto(serve.url + '/ui/#/jobs/' + live.id, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(() => /tick \d+/.test((document.querySelector('#live') || {}).textContent || ''), { timeout: 20000 });
  const last = (text) => Math.max(...[...text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
  const first = last(await page.$eval('#live', (e) => e.textContent));
  assert.ok(first < 20, `the page showed the job's output only once it had ended (tick ${first})`);
  // More arrives on the same page while the job still runs: it streams.
  await page.waitForFunction((n) => {
    const ticks = [...(document.querySelector('#live').textContent.matchAll(/tick (\d+)/g))].map((m) => Number(m[1]));
    return Math.max(...ticks) > n && !document.querySelector('#live-status').textContent.startsWith('Ended');
  }, { timeout: 20000 }, first);
  await screenshot(page, 'live');
  await page.waitForFunction(() => document.querySelector('#outcome')?.textContent === 'succeeded', { timeout: 30000 });

  const slow = await job({ command: ['sh', '-c', 'echo started; sleep 60'] });
  await page.goto(serve.url + '/ui/#/jobs/' + slow.id, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(() => (document.querySelector('#live') || {}).textContent?.includes('started'), { timeout: 20000 });
  await page.click('#cancel');
  await page.waitForFunction(() => document.querySelector('#outcome')?.textContent === 'cancelled', { timeout: 30000 });
  const rec = await call(serve.url, serve.keys.operator, 'GET', '/v1/jobs/' + slow.id);
  assert.equal(rec.json.outcome, 'cancelled');
  // The page reloads with the record: cleanup complete, no Cancel button any more.
  await page.waitForSelector('#cleanup', { timeout: 20000 });
  assert.equal(await page.$eval('#cleanup', (e) => e.textContent), 'yes');
  assert.equal(await page.$('#cancel'), null);
  await screenshot(page, 'cancelled');
  assertClean(seen);
  await page.close();
});

test('hostile output shows as inert text: no script runs, no element is injected, escapes are visible', async () => {
  const script = [
    "printf '%s\\n' '<script>window.__pwned=1</script>'",
    "printf '%s\\n' '<img src=x onerror=\"window.__pwned=2\">'",
    "printf '%s\\n' '<a href=\"javascript:window.__pwned=3\">click me</a>'",
    "printf '\\033[31mRED\\033[0m \\033]0;title\\007\\n'",
    "printf '%s\\n' '<b>bold</b>' >&2",
    "printf x > '/output/<img src=x onerror=window.__pwned=4>.txt'",
    "printf x > '/output/javascript:window.__pwned=5'",
    "echo ok > /output/plain.txt",
  ].join('; ');
  const j = await job({ command: ['sh', '-c', script], wait_s: 30 });
  assert.ok(j.record, JSON.stringify(j));
  const { page, seen } = await signIn();
  await page.goto(serve.url + '/ui/#/jobs/' + j.id, { waitUntil: 'networkidle0' });
  await page.waitForSelector('#outputs');
  const out = await page.evaluate(() => ({
    pwned: window.__pwned,
    text: document.querySelector('main').innerText,
    scripts: [...document.scripts].map((s) => s.getAttribute('src')),
    images: document.querySelectorAll('main img').length,
    bold: document.querySelectorAll('main b').length,
    links: [...document.querySelectorAll('a')].map((a) => a.getAttribute('href')),
  }));
  assert.equal(out.pwned, undefined, 'a script of the job ran');
  assert.deepEqual(out.scripts, ['app.js'], 'an element of the job became a script');
  assert.equal(out.images, 0, 'an <img> of the job became an element');
  assert.equal(out.bold, 0, 'HTML of the job was parsed');
  for (const href of out.links) assert.ok(href.startsWith('#/'), `a link that is not the dashboard's own: ${href}`);
  assert.ok(out.text.includes('<script>window.__pwned=1</script>'), 'the script text is shown literally');
  assert.ok(out.text.includes('<img src=x onerror="window.__pwned=2">'));
  assert.ok(out.text.includes('<a href="javascript:window.__pwned=3">click me</a>'));
  assert.ok(out.text.includes('\\x1b[31mRED\\x1b[0m'), 'the ANSI escapes are shown escaped');
  assert.ok(out.text.includes('\\x1b]0;title\\x07'), 'an OSC title sequence is shown escaped');
  assert.ok(out.text.includes('<b>bold</b>'), 'stderr HTML shown literally');
  assert.ok(out.text.includes('<img src=x onerror=window.__pwned=4>.txt'), 'an output named like HTML is shown by name');
  // Clicking every link and button of the outputs runs nothing of the job either.
  for (const b of await page.$$('#outputs button.download')) await b.click();
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await screenshot(page, 'hostile');
  assertClean(seen);
  await page.close();
});

test("a session's calls show their output and HTML as text", async () => {
  const opened = await call(serve.url, serve.keys.operator, 'POST', '/v1/sessions', {});
  assert.equal(opened.status, 201, opened.text);
  const sid = opened.json.id;
  try {
    const code = [
      'class H:',
      '    def _repr_html_(self): return \'<img src=x onerror="window.__pwned=7">\'',
      'print("<script>window.__pwned=6</script>\\x1b[1mBOLD")',
      'H()',
    ].join('\n');
    const ran = await call(serve.url, serve.keys.operator, 'POST', `/v1/sessions/${sid}/execs`, { code, wait_s: 60 });
    assert.ok(ran.status === 200 || ran.status === 201, ran.text);
    assert.equal(ran.json.state, 'finished', ran.text);
    const { page, seen } = await signIn();
    await page.goto(serve.url + '/ui/#/sessions', { waitUntil: 'networkidle0' });
    await page.waitForSelector(`a[href="#/sessions/${sid}"]`);
    await Promise.all([page.waitForSelector('article.call'), page.click(`a[href="#/sessions/${sid}"]`)]);
    const out = await page.evaluate(() => ({ pwned: window.__pwned, text: document.querySelector('main').innerText,
                                             images: document.querySelectorAll('main img').length }));
    assert.equal(out.pwned, undefined, 'a script of the session call ran');
    assert.equal(out.images, 0, 'the call\'s HTML became an element');
    assert.ok(out.text.includes('<script>window.__pwned=6</script>\\x1b[1mBOLD'), 'stdout shown literally, escapes escaped');
    assert.ok(out.text.includes('<img src=x onerror="window.__pwned=7">'), 'the HTML repr shown as text');
    await screenshot(page, 'session');
    assertClean(seen);
    await page.close();
  } finally {
    await call(serve.url, serve.keys.operator, 'DELETE', `/v1/sessions/${sid}`);
  }
});

test("a code job's page shows its code as text, and the usage page its cost per day and per tenant", async () => {
  const code = "print('<script>window.__pwned=6</script>')  # <img src=x onerror=window.__pwned=7>";
  const j = await job({ code, wait_s: 30 });
  assert.equal(j.outcome, 'succeeded', JSON.stringify(j));
  const { page, seen } = await signIn();
  await page.goto(serve.url + '/ui/#/jobs/' + j.id, { waitUntil: 'networkidle0' });
  await page.waitForSelector('pre.job-code');
  assert.equal(await page.$eval('pre.job-code', (e) => e.textContent), code, 'the code is shown as it was sent');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'the code became markup');
  assert.equal(await page.$$eval('main img', (i) => i.length), 0);
  await screenshot(page, 'job-code');

  await page.goto(serve.url + '/ui/#/usage', { waitUntil: 'networkidle0' });
  await page.waitForSelector('.cost-bar');
  const usage = await page.evaluate(() => [...document.querySelectorAll('section')].map((s) => ({
    title: s.querySelector('h2') ? s.querySelector('h2').textContent : '',
    rows: [...s.querySelectorAll('tbody tr')].map((r) => [...r.cells].map((c) => c.textContent)),
  })));
  const day = usage.find((u) => u.title === 'Per day');
  const tenant = usage.find((u) => u.title === 'Per tenant');
  assert.ok(day && tenant, JSON.stringify(usage));
  const today = new Date().toISOString().slice(0, 10);
  const todayRow = day.rows.find((r) => r[0] === today);
  assert.ok(todayRow, `no row for ${today}: ${JSON.stringify(day.rows)}`);
  assert.ok(Number(todayRow[1]) >= 1, 'the day counts the jobs');
  assert.match(todayRow[7], /^\d+\.\d{6} GBP$/, "the cost is the API's decimal string in GBP");
  const api = await call(serve.url, serve.keys.operator, 'GET', '/v1/usage?group_by=day');
  const apiToday = api.json.groups.find((g) => g.key === today);
  assert.equal(todayRow[7], `${apiToday.cost.total} GBP`, "the page shows the API's cost, not a rounded float");
  assert.ok(tenant.rows.some((r) => r.length > 1 && Number(r[1]) >= 1), JSON.stringify(tenant.rows));
  await screenshot(page, 'usage');
  assertClean(seen);
  await page.close();
});

test('sessions, snapshots, usage and health pages load with the key', async () => {
  const { page, seen } = await signIn();
  for (const [hash, marker] of [['#/sessions', 'h1'], ['#/snapshots', 'h1'], ['#/usage', 'table.fields'],
                                ['#/health', '#queue']]) {
    await page.goto(serve.url + '/ui/' + hash, { waitUntil: 'networkidle0' });
    await page.waitForSelector(marker);
    assert.equal(await page.$('main .error'), null, `${hash}: ${await page.$eval('main', (m) => m.innerText)}`);
  }
  assert.equal(await page.$eval('#health', (e) => e.textContent), 'ok');
  assert.match(await page.$eval('#queue', (e) => e.textContent), /^\d+$/);
  assert.equal(await page.$eval('#pool', (e) => e.textContent), 'none', 'this serve runs without a warm pool');
  await screenshot(page, 'health');
  assertClean(seen);
  await page.close();
});

test('the jobs list filters by outcome and image, and the id search opens a job', async () => {
  const ok = await job({ command: ['sh', '-c', 'true'], wait_s: 30 });
  const bad = await job({ command: ['sh', '-c', 'exit 3'], wait_s: 30 });
  assert.equal(bad.outcome, 'failed');
  const { page, seen } = await signIn();
  await page.select('select[name=outcome]', 'failed');
  await page.click('form.filters button[type=submit]');
  await page.waitForSelector(`a[href="#/jobs/${bad.id}"]`);
  assert.equal(await page.$(`a[href="#/jobs/${ok.id}"]`), null, 'a succeeded job is listed under outcome=failed');
  const outcomes = await page.$$eval('#jobs tbody tr td:nth-child(3)', (tds) => tds.map((t) => t.textContent));
  assert.ok(outcomes.length > 0 && outcomes.every((o) => o === 'failed'), outcomes.join(','));
  await screenshot(page, 'jobs-failed');
  // The image filter is a query of the API: no job here runs an image named like this.
  await page.select('select[name=outcome]', '');
  await page.type('input[name=image]', 'no-such-image');
  await page.click('form.filters button[type=submit]');
  await page.waitForFunction(() => /^0 shown/.test(document.querySelector('main p.muted').innerText));
  assert.equal((await page.$$('#jobs tbody tr')).length, 0);
  // Another tenant's jobs are refused to a key without the admin scope, and the page says so.
  await page.$eval('input[name=image]', (i) => { i.value = ''; });
  await page.type('input[name=tenant]', 'beta');
  await page.click('form.filters button[type=submit]');
  await page.waitForFunction(() => /forbidden/.test(document.querySelector('main p.error')?.innerText || ''));
  assert.equal((await page.$$('#jobs tbody tr')).length, 0);
  await page.type('input[name=id]', ok.id);
  await Promise.all([page.waitForSelector('#cleanup'), page.click('form.search button[type=submit]')]);
  assert.match(await page.$eval('h1', (h) => h.textContent), new RegExp(ok.id));
  assertClean(seen);
  await page.close();
});

test('an admin key sees every tenant: the tenant filter asks the API, each row shows its tenant', async () => {
  const mine = await job({ command: ['sh', '-c', 'true'], wait_s: 30 });
  const theirs = await job({ command: ['sh', '-c', 'echo beta'], wait_s: 30 }, serve.keys.other);
  const { page, seen } = await signIn(serve.keys.admin);
  await page.waitForSelector(`a[href="#/jobs/${mine.id}"]`);
  assert.equal(await page.$(`a[href="#/jobs/${theirs.id}"]`), null, 'by default an admin sees its own tenant');
  await page.type('input[name=tenant]', '*');
  await page.click('form.filters button[type=submit]');
  await page.waitForSelector(`a[href="#/jobs/${theirs.id}"]`);
  assert.ok(await page.$(`a[href="#/jobs/${mine.id}"]`), 'its own tenant is listed under *');
  const tenantCell = await page.$eval(`a[href="#/jobs/${theirs.id}"]`, (a) => a.closest('tr').children[3].textContent);
  assert.equal(tenantCell, 'beta');
  await screenshot(page, 'jobs-admin-all-tenants');
  await Promise.all([page.waitForSelector('#cleanup'), page.click(`a[href="#/jobs/${theirs.id}"]`)]);
  assert.match(await page.$eval('h1', (h) => h.textContent), new RegExp(theirs.id));
  assertClean(seen);
  await page.close();
});

test("an admin key's usage page: every tenant's totals, as the API's, and each tenant by its name", async () => {
  await job({ command: ['sh', '-c', 'true'], wait_s: 30 });
  await job({ command: ['sh', '-c', 'true'], wait_s: 30 }, serve.keys.other);
  const { page, seen } = await signIn(serve.keys.admin);
  await page.goto(serve.url + '/ui/#/usage', { waitUntil: 'networkidle0' });
  await page.waitForSelector('.cost-bar');
  const shown = Object.fromEntries(await page.$$eval('table.fields tr', (rows) => rows.map((r) => [
    r.querySelector('th').textContent, r.querySelector('td').textContent])));
  const tenants = await page.evaluate(() => {
    const s = [...document.querySelectorAll('section')].find((x) => x.querySelector('h2').textContent === 'Per tenant');
    return [...s.querySelectorAll('tbody tr')].map((r) => ({ label: r.cells[0].textContent, title: r.cells[0].title,
                                                             jobs: r.cells[1].textContent }));
  });
  const api = await call(serve.url, serve.keys.admin, 'GET', '/v1/usage?group_by=tenant');
  assert.equal(api.status, 200, api.text);
  assert.equal(api.json.scope, 'all_tenants');
  const total = api.json.total;
  assert.equal(shown.Scope, 'every tenant');
  assert.equal(shown.Jobs, String(total.jobs), JSON.stringify(shown));
  assert.ok(total.jobs >= 2, JSON.stringify(total));
  assert.equal(shown.CPU, ms(total.usage.cpu_ms), "the total's CPU, not the admin's own tenant's");
  assert.notEqual(shown.Wall, ms(0), JSON.stringify(shown));
  assert.match(shown.Cost, /^\d+\.\d{6} GBP$/);
  // Each tenant by its name, the id as the cell's title.
  const byName = Object.fromEntries(tenants.map((t) => [t.label, t]));
  for (const g of api.json.groups) {
    assert.ok(byName[g.name], `no row named ${g.name}: ${JSON.stringify(tenants)}`);
    assert.equal(byName[g.name].title, g.key);
    assert.equal(byName[g.name].jobs, String(g.jobs));
  }
  assert.ok(byName.alpha && byName.beta, JSON.stringify(tenants));
  await screenshot(page, 'usage-admin');
  assertClean(seen);
  await page.close();
});

test("an admin key sees another tenant's sessions and snapshots, each row with its tenant, and opens the session", async () => {
  const opened = await call(serve.url, serve.keys.other, 'POST', '/v1/sessions', {});
  assert.equal(opened.status, 201, opened.text);
  const sid = opened.json.id;
  try {
    const code = 'print("<script>window.__pwned=8</script>beta-call")';
    const ran = await call(serve.url, serve.keys.other, 'POST', `/v1/sessions/${sid}/execs`, { code, wait_s: 60 });
    assert.equal(ran.json.state, 'finished', ran.text);
    const snap = await call(serve.url, serve.keys.other, 'POST', `/v1/sessions/${sid}/snapshots`);
    assert.equal(snap.status, 201, snap.text);
    const { page, seen } = await signIn(serve.keys.admin);
    await page.goto(serve.url + '/ui/#/sessions', { waitUntil: 'networkidle0' });
    await page.waitForSelector('#sessions');
    assert.equal(await page.$(`a[href="#/sessions/${sid}"]`), null, 'by default an admin sees its own tenant');
    await page.type('input[name=tenant]', '*');
    await page.click('form.filters button[type=submit]');
    await page.waitForSelector(`a[href="#/sessions/${sid}"]`);
    const tenantCell = await page.$eval(`a[href="#/sessions/${sid}"]`, (a) => a.closest('tr').children[1].textContent);
    assert.equal(tenantCell, 'beta');
    await screenshot(page, 'sessions-admin-all-tenants');
    await Promise.all([page.waitForSelector('article.call'), page.click(`a[href="#/sessions/${sid}"]`)]);
    const out = await page.evaluate(() => ({ pwned: window.__pwned, text: document.querySelector('main').innerText }));
    assert.equal(out.pwned, undefined, 'a script of the session call ran');
    assert.ok(out.text.includes('<script>window.__pwned=8</script>beta-call'), 'the call\'s output shown as text');
    await page.goto(serve.url + '/ui/#/snapshots', { waitUntil: 'networkidle0' });
    await page.waitForSelector('#snapshots');
    await page.type('input[name=tenant]', 'beta');
    await page.click('form.filters button[type=submit]');
    await page.waitForFunction((d) => [...document.querySelectorAll('#snapshots tbody tr')]
      .some((tr) => tr.children[0].textContent === d && tr.children[1].textContent === 'beta'), {}, snap.json.digest);
    await screenshot(page, 'snapshots-admin-beta');
    assertClean(seen);
    await page.close();
    // A key without the admin scope asking for beta's sessions: refused, and the page says so.
    const { page: p2, seen: seen2 } = await signIn();
    await p2.goto(serve.url + '/ui/#/sessions', { waitUntil: 'networkidle0' });
    await p2.waitForSelector('#sessions');
    await p2.type('input[name=tenant]', 'beta');
    await p2.click('form.filters button[type=submit]');
    await p2.waitForFunction(() => /forbidden/.test(document.querySelector('main p.error')?.innerText || ''));
    assert.equal(await p2.$(`a[href="#/sessions/${sid}"]`), null);
    assertClean(seen2);
    await p2.close();
  } finally {
    await call(serve.url, serve.keys.other, 'DELETE', `/v1/sessions/${sid}`);
  }
});

test('the health page tells a running warm pool, and a pool whose process died', async () => {
  const pooled = await startServe(['--warm', '1']);
  const { page, seen } = await openPage(chrome.browser);
  try {
    await page.goto(pooled.url + '/ui/', { waitUntil: 'networkidle0' });
    await page.type('#key', pooled.keys.reader);
    await Promise.all([page.waitForSelector('#jobs'), page.click('form.signin button[type=submit]')]);
    await page.goto(pooled.url + '/ui/#/health', { waitUntil: 'networkidle0' });
    await page.waitForSelector('#pool');
    assert.equal(await page.$eval('#pool', (e) => e.textContent), 'running');
    const pid = pooled.poolPid();
    assert.ok(pid > 0, 'the serve log names its pool process');
    process.kill(pid, 'SIGKILL');  // the pool this test's serve started, by pid
    await page.waitForFunction(async () => {
      window.dispatchEvent(new HashChangeEvent('hashchange'));
      await new Promise((r) => setTimeout(r, 300));
      const p = document.querySelector('#pool');
      return p && p.textContent === 'stopped' && p.className === 'bad';
    }, { timeout: 15000, polling: 500 });
    await screenshot(page, 'health-pool-stopped');
    assertClean(seen, pooled);
  } finally {
    await page.close();
    await pooled.stop();
  }
});
