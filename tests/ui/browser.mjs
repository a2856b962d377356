// Debian's chromium, headless, driven by puppeteer-core. Root needs
// --no-sandbox; on this closed network chromium must not reach out for
// updates, sync or field trials; each launch gets a fresh profile directory.
// Every request the page makes is recorded, so a test can assert none left
// for another origin.
import puppeteer from 'puppeteer-core';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const chromiumPath = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'airlock-ui-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromiumPath,
    headless: true,
    userDataDir: profile,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync',
           '--no-first-run', '--disable-quic', '--disable-default-apps', '--disable-extensions',
           '--disable-features=Translate,OptimizationHints,MediaRouter', '--metrics-recording-only',
           '--password-store=basic', '--use-mock-keychain', '--disable-gpu'],
  });
  const pid = browser.process() && browser.process().pid;
  return {
    browser,
    async close() {
      try {
        await browser.close();
      } catch {
        if (pid) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone already */ } }
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// A page that records its requests, dialogs, console messages and page errors.
export async function openPage(browser) {
  const page = await browser.newPage();
  const seen = { requests: [], dialogs: [], console: [], errors: [] };
  page.on('request', (r) => seen.requests.push(r.url()));
  page.on('dialog', async (d) => { seen.dialogs.push(d.message()); await d.dismiss(); });
  page.on('console', (m) => seen.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  await page.setViewport({ width: 1280, height: 900 });
  return { page, seen };
}
