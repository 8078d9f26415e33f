#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer, then under ThreadSanitizer (docs/fuzzing.md,
# "Sanitizers"). Not part of CI, which runs the plain suite (scripts/test.sh): one sanitized
# build and run takes far longer than CI's time on two cores. Run it by hand before a release
# or after changing unsafe-pointer, C-interop or concurrency code.
#
# Each run is scripts/test.sh (Debian packages, a throwaway PostgreSQL, `swift test -c
# release`, the "N passed, N failed" line) with `--sanitize=…` and a build directory of its
# own, so the sanitized builds never replace the normal one:
#   address   .build-asan   ASAN_OPTIONS: abort_on_error=1, leak detection off (see below)
#   thread    .build-tsan   TSAN_OPTIONS: halt_on_error=0 (every race is reported; the run exits 66),
#                           suppressions=scripts/tsan-suppressions.txt (third-party code only, each entry explained)
# A sanitizer report makes that run fail; the script runs both and exits 1 if either failed.
#
# Each sanitizer's run has a PostgreSQL cluster of its own (VSEARCH_PG_BASE, unless set): scripts/test.sh drops and
# re-creates the test database as it starts and stops the server as it ends, so two runs sharing the clone's default
# cluster (a sanitizer run beside a plain scripts/test.sh, or beside the other sanitizer) break each other's
# PostgreSQL tests. The two runs still compete for the two cores: a run beside anything else outruns the tests'
# time limits under ThreadSanitizer (docs/fuzzing.md, "The sixth session's run").
#
# Leaks are not checked here: the CLI tests run the (sanitized) vsearch binary and compare its
# stderr, and LeakSanitizer's report at exit of every process would fail them. The fuzz
# harnesses (scripts/fuzz.sh) do check leaks, per input. --leaks turns it on here too.
#
# Usage:
#   scripts/sanitizers.sh [--address-only | --thread-only] [--leaks] [SWIFT-TEST-ARGS...]
#   scripts/sanitizers.sh --filter PixelSizeTests     # one suite, to check the set-up quickly
# Both runs together take well over an hour on two cores (two full release builds).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=(address thread) leaks=0 arguments=()
while [ $# -gt 0 ]; do
  case "$1" in
    --address-only) sanitizers=(address); shift ;;
    --thread-only) sanitizers=(thread); shift ;;
    --leaks) leaks=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) arguments+=("$1"); shift ;;
  esac
done

results=() failed=0
for sanitizer in "${sanitizers[@]}"; do
  case "$sanitizer" in
    address) scratch=.build-asan ;;
    thread) scratch=.build-tsan ;;
  esac
  echo "sanitizers.sh: the test suite under --sanitize=$sanitizer (build: $scratch)" >&2
  set +e
  VSEARCH_PG_BASE="${VSEARCH_PG_BASE:-/tmp/vsearch-pg-$(id -u)-$sanitizer-$(pwd | sha256sum | cut -c1-8)}" \
  ASAN_OPTIONS="abort_on_error=1:detect_leaks=$leaks${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  TSAN_OPTIONS="halt_on_error=0:report_signal_unsafe=0:suppressions=$PWD/scripts/tsan-suppressions.txt${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    ./scripts/test.sh --sanitize="$sanitizer" --scratch-path "$scratch" "${arguments[@]}"
  status=$?
  set -e
  if [ "$status" -eq 0 ]; then results+=("$sanitizer: passed"); else results+=("$sanitizer: FAILED (exit $status)"); failed=1; fi
done
printf 'sanitizers.sh: %s\n' "${results[@]}"
exit "$failed"
