#!/usr/bin/env bash
# Runs the whole test suite: installs missing system packages, starts PostgreSQL, then `swift test -c release`
# (release: the pixel loops are ~150x slower unoptimised, and the CLI tests run the binary).
# Ends with a plain "N passed, N failed" line summarising Swift Testing's result.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
log="$(mktemp)"
# A real PostgreSQL 18 + pgvector for the PostgreSQL store's tests (scripts/postgres.sh),
# started here on a free loopback port with a fresh test database, stopped at the end.
./scripts/postgres.sh start >/dev/null
trap 'rm -f "$log"; ./scripts/postgres.sh stop || true' EXIT
./scripts/postgres.sh psql -q -d postgres -c "DROP DATABASE IF EXISTS vsearch_test WITH (FORCE)" >/dev/null
VSEARCH_TEST_POSTGRES="$(./scripts/postgres.sh start)"
export VSEARCH_TEST_POSTGRES
set +e
swift test -c release "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
total=$(grep -aoE 'Test run with [0-9]+ tests?' "$log" | tail -1 | grep -oE '[0-9]+' || true)
if [ -n "$total" ]; then
  failed=$(grep -acE '^✘ Test ".* failed after' "$log" || true)
  if [ "$failed" -gt 0 ] || [ "$status" -ne 0 ]; then
    # Repeated at the end, where a CI log's tail shows it: which tests failed, and why.
    echo "--- failures ---"
    awk '/recorded an issue at/ { keep = 1; print; next }
         /^[[:space:]]*↳/ { if (keep) print; next }
         { keep = 0 }
         /^✘ Test ".* failed after/ { print }' "$log" | tail -80 || true
  fi
  echo "$((total - failed)) passed, ${failed} failed"
fi
exit "$status"
