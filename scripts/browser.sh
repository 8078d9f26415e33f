#!/usr/bin/env bash
# Makes the tests that drive Python packages runnable, in the venv .build-tools/venv that scripts/postgres.sh
# also uses (created here when missing, the same way):
# - the browser tests (Tests/Browser/page_test.py): selenium, pinned by version;
# - the /metrics parser test (Tests/VisualSearchServerTests/Metrics/PrometheusParserTests.swift): prometheus-client,
#   pinned by version and by the wheel's sha256 (pip's hash-checking mode, --require-hashes).
# Debian's chromium and chromium-driver come from scripts/install-deps.sh, which runs this script.
# Idempotent: quick and quiet when both are already there. Works as root (CI) or as a user.
#
# selenium 4.51.0: drives Debian's Chromium 156 through /usr/bin/chromedriver (the tests give both paths, so
# Selenium Manager never downloads anything). 4.52.0 needs a certifi release the package index does not have.
# prometheus-client 0.26.0 (Apache-2.0 AND BSD-2-Clause): pure Python, no dependencies; only its text parser,
# prometheus_client.parser.text_string_to_metric_families, is used.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.build-tools/venv"
selenium_version="4.51.0"
prometheus_client_version="0.26.0"
prometheus_client_wheel="prometheus_client-0.26.0-py3-none-any.whl"
prometheus_client_sha256="fa93d06737aa02bacd05794768508bb97d2fbee28cb3bca04eaae92f0ca953d6"

say() { echo "browser.sh: $*" >&2; }

# has PACKAGE VERSION: whether the venv holds that version of the distribution.
has() {
  "$venv/bin/python" -c "import sys, importlib.metadata as m; sys.exit(m.version('$1') != '$2')" 2>/dev/null
}

if [ -x "$venv/bin/python" ] && has selenium "$selenium_version" && has prometheus-client "$prometheus_client_version"; then
  exit 0
fi

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c '' 2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$repo/.build-tools"
  say "creating venv $venv"
  if ! python3 -m venv "$venv" >&2 2>/dev/null; then
    rm -rf "$venv"
    say "python3 -m venv failed; installing python3-venv"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >&2
    $sudo apt-get install -y -qq python3-venv >/dev/null
    py=python3
    [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # python3-venv is for Debian's python3
    "$py" -m venv "$venv" >&2 || { say "error: cannot create $venv"; exit 1; }
  fi
fi

if ! has prometheus-client "$prometheus_client_version"; then
  say "pip install prometheus-client==$prometheus_client_version ($prometheus_client_wheel, sha256 pinned)"
  requirements="$(mktemp)"
  trap 'rm -f "$requirements"' EXIT
  echo "prometheus-client==$prometheus_client_version --hash=sha256:$prometheus_client_sha256" >"$requirements"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps --only-binary=:all: \
    -r "$requirements" >&2
fi

if ! has selenium "$selenium_version"; then
  say "pip install selenium==$selenium_version"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "selenium==$selenium_version" >&2
fi
