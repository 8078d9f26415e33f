#!/usr/bin/env bash
# Refreshes docs/screenshots/ (shown in the README) from a run of the browser tests
# (Tests/Browser/page_test.py): search after an upload with a box, facets, detail with
# recommendations, one search by "Looks like" and by "Same colours", colour search, phone width,
# analytics. PNGs are shrunk with pngquant (Debian's package, installed when missing) to stay
# under ~300 KB each.
#
# Usage:
#   scripts/screenshots.sh                 run the browser tests with .build/release/vsearch
#                                          (building it if missing) into test-output/browser, then copy
#   scripts/screenshots.sh --from DIR      copy from an earlier run (e.g. test-output/browser after
#                                          scripts/test.sh) without running anything
#   --web-root DIR                         (with a run) serve the page from DIR instead of the binary's copy
# Refuses to copy from a run where a step failed unless --force is given.
set -euo pipefail
cd "$(dirname "$0")/.."

shots=test-output/browser
run=1 force=0 web_root=()
while [ $# -gt 0 ]; do
  case "$1" in
    --from) shots="$2"; run=0; shift 2 ;;
    --force) force=1; shift ;;
    --web-root) web_root=(--web-root "$2"); shift 2 ;;
    *) echo "usage: scripts/screenshots.sh [--from DIR] [--force] [--web-root DIR]" >&2; exit 64 ;;
  esac
done

if [ "$run" -eq 1 ]; then
  ./scripts/browser.sh
  [ -x .build/release/vsearch ] || swift build -c release --product vsearch
  .build-tools/venv/bin/python Tests/Browser/page_test.py --vsearch .build/release/vsearch --corpus corpus \
    --screenshots "$shots" --json "$shots/result.json" "${web_root[@]}" || true
fi

result="$shots/result.json"
[ -f "$result" ] || { echo "error: no $result: no browser test run there" >&2; exit 1; }
passed="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["passed"])' "$result")"
if [ "$passed" != "True" ] && [ "$force" -eq 0 ]; then
  echo "error: a browser step failed in $result; fix it first (or --force to copy anyway)" >&2
  exit 1
fi

if ! command -v pngquant >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq pngquant >/dev/null
fi

mkdir -p docs/screenshots
status=0
copy() {  # $1: the run's screenshot (step name, NN- prefix left out), $2: the name in docs/screenshots
  local file
  file="$(find "$shots" -maxdepth 1 -name "[0-9][0-9]-$1.png" | sort | tail -1)"
  if [ -z "$file" ]; then echo "error: no NN-$1.png in $shots" >&2; status=1; return; fi
  pngquant --quality 60-90 --speed 1 --strip --force --output "docs/screenshots/$2" "$file" ||
    cp "$file" "docs/screenshots/$2"
  echo "docs/screenshots/$2 ← $(basename "$file") ($(( $(stat -c %s "docs/screenshots/$2") / 1024 )) KB)"
}
copy box search-box.png
copy facet facets.png
copy detail-open detail.png
copy similarity-visual similarity-visual.png
copy similarity-colour similarity-colour.png
copy colour colour.png
copy phone-width-search phone.png
copy objects objects.png
copy every-product-view objects-view.png
copy phone-width-detail phone-detail.png
copy analytics analytics.png
exit "$status"
