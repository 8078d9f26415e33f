#!/usr/bin/env bash
# Makes the browser tests (Tests/Browser/page_test.py) runnable: selenium, pinned, in the venv
# .build-tools/venv that scripts/postgres.sh also uses (created here when missing, the same way).
# Debian's chromium and chromium-driver come from scripts/install-deps.sh, which runs this script.
# Idempotent: quick and quiet when selenium is already there. Works as root (CI) or as a user.
#
# selenium 4.51.0: drives Debian's Chromium 156 through /usr/bin/chromedriver (the tests give both paths, so
# Selenium Manager never downloads anything). 4.52.0 needs a certifi release the package index does not have.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.build-tools/venv"
selenium_version="4.51.0"

say() { echo "browser.sh: $*" >&2; }

if [ -x "$venv/bin/python" ] &&
   "$venv/bin/python" -c "import sys, selenium; sys.exit(selenium.__version__ != '$selenium_version')" 2>/dev/null; then
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

say "pip install selenium==$selenium_version"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "selenium==$selenium_version" >&2
