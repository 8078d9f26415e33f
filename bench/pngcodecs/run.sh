#!/usr/bin/env bash
# Builds pngdecode.c against this checkout's CPNGCodec and libpng shim, then times the three decoders (see README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$(cd "$here/../.." && pwd)"
dpkg-query -W -f='${Status}' libspng-dev 2>/dev/null | grep -q "install ok installed" || apt-get install -y -q libspng-dev >/dev/null
out="$root/bench/work/pngdecode"; mkdir -p "$root/bench/work"
cc -O2 -I"$root/Sources/CPNGCodec/include" -I"$root/Sources/CLibPNGReference/include" -o "$out" "$here/pngdecode.c" \
   "$root"/Sources/CPNGCodec/*.c "$root/Sources/CLibPNGReference/CLibPNGReference.c" -lspng -lpng16 -ldeflate -lz
reps="${1:-5}"; shift || true
if [ "$#" -eq 0 ]; then set -- "$root"/bench/work/inputs/main/*.png; fi
for run in 1 2 3; do taskset -c 1 "$out" "$reps" "$@"; done
