#!/usr/bin/env bash
# Installs the Debian packages vsearch builds against, when they are missing:
# libjpeg-turbo (TurboJPEG API), libpng, SQLite, pkg-config. Idempotent and
# quiet when everything is present. In CI (CI=true) it also refreshes the
# package lists and upgrades libpng16-16 to Debian's latest security update.
set -euo pipefail

packages=(pkg-config libjpeg-dev libturbojpeg0-dev libpng-dev libsqlite3-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if [ "${#missing[@]}" -eq 0 ] && [ "${CI:-}" != "true" ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "error: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "==> apt-get update" >&2
$sudo apt-get update -qq
if [ "${#missing[@]}" -gt 0 ]; then
  echo "==> installing ${missing[*]}" >&2
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Cheap insurance: libpng has had decoder CVEs; take Debian's latest security update.
$sudo apt-get install -y -qq --only-upgrade libpng16-16 >/dev/null || true
