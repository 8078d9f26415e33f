#!/usr/bin/env bash
# Times the HNSW graph's add and search (prefetch.cpp) built from this checkout's CHNSWIndex as the product builds it
# (hnswlib's SSE prefetches on) and as a sanitizer build does (NO_MANUAL_VECTORIZATION: the prefetches off),
# pinned to core 1, three runs each, interleaved, for 112 floats (colour) and 512 (learned). Both must print the same
# checksums. Figures: bench/RESULTS.md, "Issue 41 — hnswlib's prefetches".
#   bench/hnswprefetch/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$(cd "$here/../.." && pwd)"
work="$root/bench/work/hnswprefetch"; mkdir -p "$work"
build() { g++ -std=c++17 -O2 "$@" -I"$root/Sources/CHNSWIndex/include" -I"$root/Sources/CHNSWIndex" "$root/Sources/CHNSWIndex/HNSWIndex.cpp" "$here/prefetch.cpp" -ldeflate -lpthread; }
build -o "$work/prefetch-on"
build -DNO_MANUAL_VECTORIZATION -o "$work/prefetch-off"
for shape in "50000 112" "20000 512"; do
  for run in 1 2 3; do
    taskset -c 1 "$work/prefetch-on" $shape "prefetch on (product)"
    taskset -c 1 "$work/prefetch-off" $shape "prefetch off (sanitizers)"
  done
done
