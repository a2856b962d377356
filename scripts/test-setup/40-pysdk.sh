#!/usr/bin/env bash
# The Python SDK suite (tests/pysdk): Debian's pytest, and venv + pip for the
# test that installs sdk/python into a fresh venv without network.
set -euo pipefail
need=()
for p in python3-pytest python3-venv python3-pip; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
  echo "pysdk: installed ${need[*]}"
else
  echo "pysdk: python3-pytest, python3-venv, python3-pip present"
fi
