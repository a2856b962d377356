#!/bin/sh
# The document rendering job (image render): headless Chromium prints the
# untrusted /inputs/page.html to /output/doc.pdf. Chromium's own sandbox needs
# namespaces the airlock sandbox does not give (--no-sandbox: airlock is the
# boundary); background services (updates, metrics, sync, safe browsing) are
# off so the only network attempts are the page's. PROXY, when set, is the
# egress gateway (airlock sets HTTP_PROXY when the job names destinations):
# then every attempt of the page is refused by it and listed in the record.
# /usr/lib/chromium/chromium is the browser itself: Debian's /usr/bin/chromium
# wrapper reads /etc/chromium.d, which the sandbox's /etc does not carry.
set -eu
export HOME=/tmp
proxy=""
if [ -n "${HTTP_PROXY:-}" ]; then proxy="--proxy-server=${HTTP_PROXY}"; fi
/usr/lib/chromium/chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --no-first-run --no-default-browser-check --disable-background-networking \
  --disable-component-update --disable-sync --disable-default-apps --disable-extensions \
  --disable-breakpad --disable-crash-reporter --metrics-recording-only --safebrowsing-disable-auto-update \
  --disable-features=MediaRouter,OptimizationHints,Translate,AutofillServerCommunication,NetworkTimeServiceQuerying,CertificateTransparencyComponentUpdater --component-updater=disable \
  --user-data-dir=/tmp/chromium --virtual-time-budget=5000 --run-all-compositor-stages-before-draw \
  --no-pdf-header-footer $proxy --print-to-pdf=/output/doc.pdf file:///inputs/page.html
