#!/usr/bin/env bash
# Builds vsearch's libFuzzer harnesses (the separate package in Fuzz/) and runs them
# (docs/fuzzing.md).
#
# One binary, Fuzz/.build/release/vsearch-fuzz, built with `-sanitize=fuzzer,address`; the
# environment variable FUZZ_TARGET picks the harness. The binary itself lists the harnesses with
# their -max_len, -timeout and seed globs (`FUZZ_TARGET=list`), so adding a harness needs no
# change here.
#
# For each target (all, or those named), in turn:
#   - the seed corpus is assembled in Fuzz/.work/corpus/<target>/: the files its seed globs
#     match (Tests/Fixtures/badinput/**, corpus/images/…) no longer than its -max_len, plus
#     Fuzz/Seeds/<target>/* and Fuzz/Regressions/<target>/* (every past finding runs first);
#     the corpus is kept between runs (--fresh starts it again from the seeds);
#   - libFuzzer runs for --seconds (default 60) with -max_len, -timeout, -rss_limit_mb=2048
#     and -print_final_stats=1; new corpus entries go to the corpus directory, crashes, leaks,
#     timeouts and out-of-memory inputs to Fuzz/.work/artifacts/<target>/, the log to
#     Fuzz/.work/logs/<target>.log.
# At the end it prints, per target: seed files; final corpus size (files in the corpus directory,
# seeds included); libFuzzer's kept corpus and coverage (its last "DONE" line; coverage counts
# instrumented Swift code only); executions (stat::number_of_executed_units) and executions per
# second; and findings. It exits 1 if any target found something.
#
# Usage:
#   scripts/fuzz.sh [--seconds N] [--fresh] [--no-build] [TARGET...]
#   scripts/fuzz.sh --replay [TARGET...]        run every saved input (Fuzz/Regressions/<target>/*, Fuzz/Seeds/<target>/*)
#                                               once each under AddressSanitizer, no fuzzing (CI does, .ci/run)
#   scripts/fuzz.sh --minimize TARGET FILE      minimise a crashing input (-minimize_crash=1);
#                                               the result is Fuzz/.work/artifacts/<target>/minimized-*
#   scripts/fuzz.sh --list                      the harnesses
#
# A finding: minimise it, keep it as Fuzz/Regressions/<target>/<what-it-is>, fix the code, and
# add the input to the regression test of the module it broke (docs/fuzzing.md, "Findings").
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

seconds=60 fresh=false build=true mode=fuzz targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    --fresh) fresh=true; shift ;;
    --no-build) build=false; shift ;;
    --replay) mode=replay; shift ;;
    --list) mode=list; shift ;;
    --minimize) mode=minimize; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

work="$repo/Fuzz/.work"
mkdir -p "$work/logs"
# Swift's own crash backtracer is slow (it symbolicates every crash, which makes minimising crawl)
# and reads memory in a way AddressSanitizer reports; libFuzzer's stack trace, printed through
# ASan, names the Swift runtime failure just as well.
export SWIFT_BACKTRACE=enable=no
# Leaks inside the C libraries that ImageOps cannot free (each one in docs/fuzzing.md).
export LSAN_OPTIONS="suppressions=$repo/Fuzz/lsan-suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

if $build; then
  ./scripts/install-deps.sh
  echo "fuzz.sh: building Fuzz/ with -sanitize=fuzzer,address (log: Fuzz/.work/build.log)" >&2
  if ! swift build -c release --package-path Fuzz --scratch-path Fuzz/.build \
      -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing \
      >"$work/build.log" 2>&1; then
    grep -E "error:" "$work/build.log" | head -20 >&2 || tail -30 "$work/build.log" >&2
    echo "fuzz.sh: the build failed (Fuzz/.work/build.log)" >&2
    exit 2
  fi
fi
binary="$repo/Fuzz/.build/release/vsearch-fuzz"
[ -x "$binary" ] || { echo "fuzz.sh: $binary is missing; run without --no-build" >&2; exit 2; }

# name <TAB> max_len <TAB> timeout <TAB> seed globs <TAB> summary, one harness a line.
table="$(FUZZ_TARGET=list "$binary" 2>/dev/null)"
if [ "$mode" = list ]; then
  printf '%s\n' "$table" | awk -F'\t' '{ printf "%-10s max_len %-6s timeout %-3s %s\n", $1, $2, $3, $5 }'
  exit 0
fi
field() { printf '%s\n' "$table" | awk -F'\t' -v name="$1" -v column="$2" '$1 == name { print $column }'; }
known() { [ -n "$(field "$1" 1)" ]; }

if [ "$mode" = minimize ]; then
  [ "${#targets[@]}" -eq 2 ] || { echo "usage: fuzz.sh --minimize TARGET FILE" >&2; exit 2; }
  target="${targets[0]}" input="${targets[1]}"
  known "$target" || { echo "fuzz.sh: no target $target" >&2; exit 2; }
  mkdir -p "$work/artifacts/$target"
  FUZZ_TARGET="$target" "$binary" -minimize_crash=1 -max_total_time=120 -runs=100000 \
    -timeout="$(field "$target" 3)" -rss_limit_mb=2048 \
    -exact_artifact_path="$work/artifacts/$target/minimized-$(basename "$input")" "$input"
  echo "fuzz.sh: minimised input: Fuzz/.work/artifacts/$target/minimized-$(basename "$input")" >&2
  exit 0
fi

if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(printf '%s\n' "$table" | cut -f1)
fi
for target in "${targets[@]}"; do
  known "$target" || { echo "fuzz.sh: no target $target; known: $(printf '%s\n' "$table" | cut -f1 | tr '\n' ' ')" >&2; exit 2; }
done

if [ "$mode" = replay ]; then
  status=0
  for target in "${targets[@]}"; do
    shopt -s nullglob
    inputs=("Fuzz/Regressions/$target"/* "Fuzz/Seeds/$target"/*)
    shopt -u nullglob
    [ "${#inputs[@]}" -gt 0 ] || continue
    if FUZZ_TARGET="$target" "$binary" -timeout="$(field "$target" 3)" -rss_limit_mb=2048 "${inputs[@]}" \
        >"$work/logs/$target-replay.log" 2>&1; then
      echo "$target: ${#inputs[@]} saved inputs pass (Fuzz/Regressions, Fuzz/Seeds)"
    else
      echo "$target: a regression input fails (Fuzz/.work/logs/$target-replay.log)"; status=1
    fi
  done
  exit "$status"
fi

# Copies the seeds of one target into its corpus directory (named by content hash, as libFuzzer
# names its own entries, so a seed is never duplicated) and prints how many seed files there are.
assemble_seeds() {
  local target="$1" corpus="$2" max_len="$3" count=0 file
  shopt -s globstar nullglob
  local files=()
  for pattern in $(field "$target" 4); do files+=($pattern); done
  files+=("Fuzz/Seeds/$target"/* "Fuzz/Regressions/$target"/*)
  shopt -u globstar nullglob
  for file in "${files[@]}"; do
    [ -f "$file" ] || continue
    [ "$(stat -c %s "$file")" -le "$max_len" ] || continue
    cp "$file" "$corpus/$(sha1sum "$file" | cut -c1-40)"
    count=$((count + 1))
  done
  echo "$count"
}

summary=() failed=0
for target in "${targets[@]}"; do
  max_len="$(field "$target" 2)" timeout="$(field "$target" 3)"
  corpus="$work/corpus/$target" artifacts="$work/artifacts/$target" log="$work/logs/$target.log"
  $fresh && rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts"
  seeds="$(assemble_seeds "$target" "$corpus" "$max_len")"
  before="$(find "$artifacts" -type f | sort)"
  echo "fuzz.sh: $target: ${seeds} seeds, ${seconds}s, -max_len=$max_len -timeout=$timeout (log: Fuzz/.work/logs/$target.log)" >&2
  set +e
  FUZZ_TARGET="$target" "$binary" "$corpus" -max_total_time="$seconds" -max_len="$max_len" -timeout="$timeout" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1
  status=$?
  set -e
  # Each grep may find nothing (a crash ends libFuzzer without a DONE line): `|| true`, or
  # pipefail and set -e would end the whole script at the first target that crashes.
  executions="$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)"
  rate="$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)"
  size="$(find "$corpus" -type f | wc -l)"
  # libFuzzer's last status line: coverage (instrumented edges: Swift code only) and the
  # corpus it keeps in memory (the seeds and new inputs that add coverage).
  done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)"
  coverage="$(printf '%s' "$done_line" | grep -oE 'cov: [0-9]+' | grep -oE '[0-9]+' || true)"
  kept="$(printf '%s' "$done_line" | grep -oE 'corp: [0-9]+' | grep -oE '[0-9]+' || true)"
  new_artifacts="$(comm -13 <(printf '%s\n' "$before") <(find "$artifacts" -type f | sort) | sed '/^$/d')"
  findings="none"
  if [ "$status" -ne 0 ] || [ -n "$new_artifacts" ]; then
    failed=1
    findings="$(printf '%s\n' "$new_artifacts" | sed "s|^$repo/||" | paste -sd' ' -)"
    [ -n "$findings" ] || findings="libFuzzer exited $status (see the log)"
    grep -m1 -E "Swift runtime failure|Fatal error|invariant broken|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log" \
      | sed "s/^/fuzz.sh: $target: /" >&2 || true
  fi
  summary+=("$(printf '%-10s %6s %8s %6s %6s %12s %8s  %s' "$target" "$seeds" "$size" "${kept:-?}" "${coverage:-?}" \
    "${executions:-?}" "${rate:-?}" "$findings")")
done

printf '\n%-10s %6s %8s %6s %6s %12s %8s  %s\n' target seeds corpus kept cov executions exec/s findings
printf '%s\n' "${summary[@]}"
exit "$failed"
