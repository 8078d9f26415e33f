"""Fit issue 25's fixed projection of the learned vectors (PCA, 1280 -> k) and write it for the Swift side.

    bench/.venv/bin/python bench/fit_projection.py                 # k 512, pad: into bench/work/projection/
    bench/.venv/bin/python bench/fit_projection.py --k 256 --out DIR [--model-dir DIR] [--mode squash] [--trim]

The defaults are what bench/RESULTS.md ("Issue 25 — quality experiments") recommends: PCA 512 of the
vectors of `pad` preprocessing (stored as float16 on the Swift side: 1 KB per item).

**Fit pool** (`fit_pool()`): package pictures that no evaluation set uses — Open Clip Art drawings
(`openclipart-png`) and Tux Paint stamps (`tuxpaint-stamps-default`) that are in neither part of the kinds set,
the copy-detection sets (originals and distractors) nor corpus/; no icon, star, flag, gradient or pattern
folder; header ≤ 6 MP; byte-identical files once; a seeded draw of POOL images. So the held-out parts never
touch the projection, and the tune figures of similarity_experiments.py are out of sample too.
Each picture is embedded exactly as the catalog would be (similarity_lib: flattened on white, `--mode`,
EfficientNet-Lite0, L2-normalised 1280-d).

**projection.bin**: little-endian float32, `mean[1280]` then `matrix[k][1280]` row-major; a vector x (the model's
L2-normalised output) maps to normalise(matrix · (x − mean)). Size 4 × 1280 × (k + 1) bytes (k 512: 2,626,560; k 256: 1,315,840).
**projection.json**: k, input dimension, the model's name/version/sha256, the preprocessing, the fit pool (count,
packages and versions, seed), the explained variance, the file's sha256 and layout. The same bytes come out on
every run with the same packages, model and numpy's LAPACK (SVD signs are fixed: each row's largest |value| is
made positive).
"""
import argparse
import glob
import hashlib
import json
import os
import random
import subprocess
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "datasets"))
import similarity_lib as sl  # noqa: E402

POOL = 2000
SEED = 20261127
CACHE = os.path.join(HERE, "work", "simexp")


def used_by_sets():
    import csv
    import build_copies
    import build_kinds
    build_kinds.build()
    build_copies.build()
    used = set(build_kinds.corpus_paths())
    with open(os.path.join(build_kinds.OUT, "labels.csv"), newline="") as f:
        used |= {os.path.basename(r["source_path"]) for r in csv.DictReader(f)}
    for part in ("tune", "held-out"):
        with open(os.path.join(build_copies.OUT, part, "catalog.csv"), newline="") as f:
            used |= {os.path.basename(r["source_path"]) for r in csv.DictReader(f)}
    return used


def fit_pool(count=POOL):
    """Paths of the fit pool (see the module's doc), in a seeded order."""
    import build_kinds
    used = used_by_sets()
    skip = ("/icons/", "/stars/", "/flags/", "/gradients/", "/patterns/", "/alphabets/", "/money/")
    paths = sorted(p for root in (build_kinds.CLIP, build_kinds.TUX)
                   for p in glob.glob(os.path.join(root, "**", "*.png"), recursive=True)
                   if os.path.basename(p) not in used and not any(s in p for s in skip))
    rng = random.Random(SEED)
    rng.shuffle(paths)
    out, seen = [], set()
    for p in paths:
        if len(out) == count:
            break
        md5 = hashlib.md5(open(p, "rb").read()).hexdigest()
        if md5 in seen:
            continue
        seen.add(md5)
        try:
            with Image.open(p) as im:
                if im.width * im.height > 6_000_000 or min(im.size) < 32:
                    continue
        except Exception:
            continue
        out.append(p)
    return out


def pool_vectors(model, mode="pad", trim=False, count=POOL):
    """L2-normalised 1280-d vectors of the fit pool (cached in bench/work/simexp/ by model hash and options)."""
    os.makedirs(CACHE, exist_ok=True)
    key = f"pool-{model.sha256[:12]}-{mode}-{int(trim)}-{count}.npy"
    path = os.path.join(CACHE, key)
    if os.path.exists(path):
        return np.load(path)
    paths = fit_pool(count)
    vecs = []
    for i in range(0, len(paths), 32):
        ims = [sl.load_rgb(p) for p in paths[i:i + 32]]
        vecs.append(model.embed(ims, mode, trim))
    v = np.concatenate(vecs)
    np.save(path, v)
    return v


def package_versions():
    out = {}
    for p in ("openclipart-png", "tuxpaint-stamps-default"):
        out[p] = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", p], capture_output=True, text=True).stdout
    return out


def fixed_signs(matrix):
    idx = np.abs(matrix).argmax(axis=1)
    signs = np.sign(matrix[np.arange(len(matrix)), idx])
    return matrix * signs[:, None]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=512)
    ap.add_argument("--mode", default="pad", choices=list(sl.RESIZE_MODES))
    ap.add_argument("--trim", action="store_true")
    ap.add_argument("--model-dir")
    ap.add_argument("--out", default=os.path.join(HERE, "work", "projection"))
    a = ap.parse_args()
    model = sl.Model(a.model_dir)
    x = pool_vectors(model, a.mode, a.trim)
    proj = sl.Projection(x, a.k)
    proj.matrix = fixed_signs(proj.matrix)
    os.makedirs(a.out, exist_ok=True)
    binpath = os.path.join(a.out, "projection.bin")
    with open(binpath, "wb") as f:
        f.write(proj.mean.astype("<f4").tobytes())
        f.write(np.ascontiguousarray(proj.matrix, "<f4").tobytes())
    data = open(binpath, "rb").read()
    assert len(data) == 4 * model.dimension * (a.k + 1)
    # The repository stores the float16 copy (scripts/model/efficientnet-lite0-pca512-f16.bin, under the 2 MiB
    # a committed file may take); scripts/install-model.sh widens it back to float32.
    with open(os.path.join(a.out, "projection-f16.bin"), "wb") as f:
        f.write(np.frombuffer(data, "<f4").astype("<f2").tobytes())
    meta = {
        "kind": "pca",
        "k": a.k,
        "input_dimension": model.dimension,
        "layout": "little-endian float32: mean[input_dimension], then matrix[k][input_dimension] row-major",
        "apply": "y = normalise(matrix · (x − mean)), x the model's output L2-normalised",
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "explained_variance": round(proj.explained, 4),
        "model": {"name": model.manifest.get("name"), "version": model.manifest.get("version"),
                  "sha256": model.sha256},
        "preprocessing": {"mode": a.mode, "description": sl.RESIZE_MODES[a.mode], "trim_margins": a.trim,
                          "resample": "Pillow bilinear (antialiased)", "background": "alpha flattened on white"},
        "fit_pool": {"count": len(x), "seed": SEED, "packages": package_versions(),
                     "rule": "Open Clip Art + Tux Paint pictures used by no evaluation set (bench/fit_projection.py)"},
        "numpy": np.__version__,
    }
    with open(os.path.join(a.out, "projection.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(f"{binpath}: {len(data):,} bytes, k {a.k}, explained variance {proj.explained:.3f}, "
          f"fit on {len(x)} vectors; sha256 {meta['sha256']}")


if __name__ == "__main__":
    main()
