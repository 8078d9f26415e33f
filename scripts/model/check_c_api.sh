#!/usr/bin/env bash
# Checks vsearch's own declarations of ONNX Runtime's C API (Sources/COnnxRuntime) against a real library, with
# plain cc: no Swift build. Builds a tiny model (make_tiny_model.py: Conv -> Relu -> GlobalAveragePool -> Flatten,
# its output computed independently in Python), then check_c_api.c loads the library through vs_ort_load and calls
# every declared function: names, types and dims, a batch of 2 and of 1 compared with the reference, the loader's
# failure messages, run-time errors and damaged models. Run it after changing the header or the pinned runtime.
#
# Usage: scripts/model/check_c_api.sh [--sanitize] [LIBRARY]
#   LIBRARY defaults to $VSEARCH_ONNXRUNTIME, else .build-tools/onnxruntime/lib/libonnxruntime.so.1
#   (scripts/install-model.sh puts it there). Needs cc and python3 (standard library only). Prints each check and
#   ends with "N passed, N failed"; exits 1 on any failure. --sanitize builds with AddressSanitizer and UBSan.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
sanitize=()
library=""
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=(-g -fsanitize=address,undefined -fno-omit-frame-pointer) ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown option $arg" >&2; exit 2 ;;
    *) library="$arg" ;;
  esac
done
library="${library:-${VSEARCH_ONNXRUNTIME:-$repo/.build-tools/onnxruntime/lib/libonnxruntime.so.1}}"
if [ ! -e "$library" ]; then
  echo "error: no ONNX Runtime library at $library (run scripts/install-model.sh, or pass a path)" >&2
  exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 "$repo/scripts/model/make_tiny_model.py" "$work/tiny"
# No -lonnxruntime: the library is only ever dlopen'ed. -ldl for glibc before 2.34 (later ones have it in libc).
cc -std=gnu11 -O1 -Wall -Wextra -Werror "${sanitize[@]}" -I "$repo/Sources/COnnxRuntime/include" \
  "$repo/scripts/model/check_c_api.c" "$repo/Sources/COnnxRuntime/COnnxRuntime.c" -ldl -lm -o "$work/check_c_api"
"$work/check_c_api" "$library" "$work/tiny"
