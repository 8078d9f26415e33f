#!/usr/bin/env bash
# kill -9 during indexing, many times: the long form of the test suite's
# 20-round check. Each round starts `vsearch index` on a folder of distinct
# images, kills it at a random moment, then checks that the catalog opens,
# PRAGMA integrity_check says ok, and every batch the run acknowledged
# ("committed N") is present. A final run must finish with exactly the
# expected number of images.
#   scripts/reliability/kill-index.sh [ROUNDS=200]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-200}"
swift build -c release --product vsearch >/dev/null
bin="$(swift build -c release --show-bin-path)/vsearch"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/images"
n=0
for copy in 0 1 2; do
  for f in corpus/images/*.jpg; do
    { cat "$f"; printf 'copy%s' "$copy"; } > "$work/images/c${copy}_$(basename "$f")"   # same picture, different file
    n=$((n + 1))
  done
done
catalog="$work/catalog.sqlite"
count() { [ -f "$catalog" ] && "$bin" catalog stats --catalog "$catalog" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["images"])' || echo 0; }
for round in $(seq 1 "$rounds"); do
  before=$(count)
  "$bin" index "$work/images" --catalog "$catalog" --batch-size 5 --jobs 2 > "$work/out.txt" 2>/dev/null &
  pid=$!
  sleep "0.$(( (RANDOM % 25) + 1 ))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  acknowledged=$(grep -o '^committed [0-9]*' "$work/out.txt" | tail -1 | cut -d' ' -f2); acknowledged=${acknowledged:-0}
  stats=$("$bin" catalog stats --catalog "$catalog" --json)
  integrity=$(printf '%s' "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["integrity"])')
  after=$(printf '%s' "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["images"])')
  if [ "$integrity" != "ok" ] || [ "$after" -lt $((before + acknowledged)) ] || [ "$after" -gt "$n" ]; then
    echo "round $round FAILED: integrity=$integrity before=$before acknowledged=$acknowledged after=$after" >&2
    exit 1
  fi
done
"$bin" index "$work/images" --catalog "$catalog" >/dev/null
final=$(count)
[ "$final" -eq "$n" ] || { echo "final count $final, expected $n" >&2; exit 1; }
echo "$rounds rounds of kill -9 during indexing: integrity ok every time, no acknowledged batch lost; final $final/$n images"
