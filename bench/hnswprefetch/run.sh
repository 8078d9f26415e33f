#!/usr/bin/env bash
# Times the HNSW graph's add and search (prefetch.cpp) built against this checkout's CHNSWIndex, whose hnswlib has
# its manual vectorization (the SSE prefetches) off, and against REV's (default: the commit before that change),
# pinned to core 1, three runs each, interleaved, for 112 floats (colour) and 512 (learned).
# Figures: bench/RESULTS.md, "Issue 41 — hnswlib's prefetches off".
#   bench/hnswprefetch/run.sh [REV]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$(cd "$here/../.." && pwd)"
change="$(git -C "$root" log -1 --format=%h -S NO_MANUAL_VECTORIZATION -- Sources/CHNSWIndex/HNSWIndex.cpp)"
rev="${1:-${change:+$change~1}}"; rev="${rev:-HEAD}"
work="$root/bench/work/hnswprefetch"; mkdir -p "$work"
git -C "$root" show "$rev:Sources/CHNSWIndex/HNSWIndex.cpp" > "$work/before.cpp"
build() { g++ -std=c++17 -O2 -I"$root/Sources/CHNSWIndex/include" -I"$root/Sources/CHNSWIndex" "$1" "$here/prefetch.cpp" -o "$2" -ldeflate -lpthread; }
build "$work/before.cpp" "$work/prefetch-before"
build "$root/Sources/CHNSWIndex/HNSWIndex.cpp" "$work/prefetch-now"
for shape in "50000 112" "20000 512"; do
  for run in 1 2 3; do
    taskset -c 1 "$work/prefetch-before" $shape "prefetch on ($rev)"
    taskset -c 1 "$work/prefetch-now" $shape "prefetch off ($(git -C "$root" rev-parse --short HEAD))"
  done
done
