#!/usr/bin/env bash
# Times the HNSW graph's bookkeeping readers (readers.cpp) built against this checkout's
# CHNSWIndex and against REV's (default: the commit before issue 41 gave them hnswlib's locks),
# pinned to core 1, three runs each, interleaved. Figures: bench/RESULTS.md, "Issue 41 — the HNSW readers' locks".
#   bench/hnswreaders/run.sh [REV]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$(cd "$here/../.." && pwd)"
rev="${1:-6f7e407~1}"
work="$root/bench/work/hnswreaders"; mkdir -p "$work"
git -C "$root" show "$rev:Sources/CHNSWIndex/HNSWIndex.cpp" > "$work/before.cpp"
build() { g++ -std=c++17 -O2 -I"$root/Sources/CHNSWIndex/include" -I"$root/Sources/CHNSWIndex" "$1" "$here/readers.cpp" -o "$2" -ldeflate -lpthread; }
build "$work/before.cpp" "$work/readers-before"
build "$root/Sources/CHNSWIndex/HNSWIndex.cpp" "$work/readers-now"
[ -f "$work/graph.bin" ] || "$work/readers-now" "$work/graph.bin" "building the graph" >/dev/null
for run in 1 2 3; do
  taskset -c 1 "$work/readers-before" "$work/graph.bin" "before ($rev)"
  taskset -c 1 "$work/readers-now" "$work/graph.bin" "now ($(git -C "$root" rev-parse --short HEAD))"
done
