#!/usr/bin/env bash
# Runs the whole test suite: installs missing system packages, then `swift test -c release`
# (release: the pixel loops are ~150x slower unoptimised, and the CLI tests run the binary).
# Ends with a plain "N passed, N failed" line summarising Swift Testing's result.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
swift test -c release "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
total=$(grep -aoE 'Test run with [0-9]+ tests?' "$log" | tail -1 | grep -oE '[0-9]+' || true)
if [ -n "$total" ]; then
  failed=$(grep -acE '^✘ Test ".* failed after' "$log" || true)
  echo "$((total - failed)) passed, ${failed} failed"
fi
exit "$status"
