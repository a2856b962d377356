#!/bin/sh
# Starts `airlock serve` in a pod (API and worker alike).
# The configuration is the ConfigMap's airlock.toml with the Secret's values in
# front of it (top-level keys must come before the first [table]), written to a
# root-only file on the pod's tmpfs: no secret is in the ConfigMap, on the
# command line (/proc/PID/cmdline) or in the environment.
# Each file of the Secret named like a configuration key (database_url,
# node_key) becomes that key; its value is one line of text.
set -eu

conf_dir=${AIRLOCK_CONF_DIR:-/etc/airlock/config}
secret_dir=${AIRLOCK_SECRET_DIR:-/etc/airlock/secrets}
out=${AIRLOCK_RUNTIME_CONFIG:-/run/airlock/airlock.toml}
binary=${AIRLOCK_BINARY:-airlock}

die() { echo "start.sh: $*" >&2; exit 125; }

[ -f "$conf_dir/airlock.toml" ] || die "no $conf_dir/airlock.toml (the ConfigMap airlock-config)"
umask 077
tmp="$out.tmp.$$"
: > "$tmp"
if [ -d "$secret_dir" ]; then
  for file in "$secret_dir"/*; do
    key=${file##*/}
    # Secret volumes also hold ..data links; only key-like names count.
    case "$key" in
      *[!a-z0-9_]* | [!a-z]*) continue ;;
    esac
    [ -f "$file" ] || continue
    lines=$(wc -l < "$file")
    value=$(cat "$file")
    # One line: a trailing newline is allowed (kubectl create secret --from-file adds none).
    if [ "$lines" -gt 1 ] || { [ "$lines" -eq 1 ] && [ -n "$(tail -c1 "$file")" ]; }; then
      rm -f "$tmp"; die "the secret $key is more than one line"
    fi
    case "$value" in
      "") rm -f "$tmp"; die "the secret $key is empty" ;;
      *CHANGE-ME*) rm -f "$tmp"; die "the secret $key is still the example's placeholder (deploy/kubernetes/README.md, Secrets)" ;;
    esac
    if printf '%s' "$value" | LC_ALL=C grep -q '[[:cntrl:]]'; then
      rm -f "$tmp"; die "the secret $key holds a control character"
    fi
    escaped=$(printf '%s' "$value" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')
    printf '%s = "%s"\n' "$key" "$escaped" >> "$tmp"
  done
fi
cat "$conf_dir/airlock.toml" >> "$tmp"
mv -f "$tmp" "$out"
exec "$binary" serve --config "$out" "$@"
