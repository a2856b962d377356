#!/bin/sh
# A session on airlock serve, for k8s.worker_privileges and k8s.oci_worker: run
# inside the worker's container (after prepare-worker.sh) as
#   session_probe.sh AIRLOCK_BINARY
# It makes a key, starts airlock serve on a loopback port, opens a session,
# runs a Python and a shell call, closes it and stops the server (by its pid).
# Its output is checked by the caller.
set -u
airlock="$1"
mkdir -m 0711 /tmp/data
"$airlock" keys create --tenant k8s --scopes run,read --data-dir /tmp/data > /tmp/key 2>/dev/null || exit 2
chmod 0600 /tmp/key
"$airlock" serve --data-dir /tmp/data --state-dir /var/lib/airlock --listen 127.0.0.1:0 > /tmp/serve.log 2>&1 &
serve=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*' /tmp/serve.log | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
id=$("$airlock" session create --server "$url" --key-file /tmp/key 2>&1)
"$airlock" session exec "$id" --server "$url" --key-file /tmp/key 'import os; print("uid", os.getuid(), 6 * 7)' 2>&1
"$airlock" session exec "$id" --shell --server "$url" --key-file /tmp/key 'echo shell-ok' 2>&1
"$airlock" session close "$id" --server "$url" --key-file /tmp/key 2>&1
kill "$serve"
wait "$serve"
