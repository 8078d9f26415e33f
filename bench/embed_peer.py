"""Issue 25's Python peer for the speed target: decode + preprocess + embed a 1-MP JPEG on one core.

    python3 bench/embed_peer.py                       # both Pillows, batch 1/8/16, 5 runs each (~3 min)
    python3 bench/embed_peer.py --runs 5 --count 100 --mode pad --markdown bench/work/embed-peer.md

What a tuned Python user would write: `Image.open`, `Image.draft("RGB", …)` (libjpeg DCT scaling to the
smallest 1/2, 1/4, 1/8 scale still covering what the resize needs), `convert("RGB")`, similarity_lib.prepare
(Pillow bilinear, antialiased) to 224×224, `(v − mean) / std` per model.json in numpy, NCHW, onnxruntime
1.23.2 `InferenceSession` on the CPU with intra_op_num_threads = 1, inter_op_num_threads = 1, sequential
execution, then L2 normalisation. Batch 1 runs one image at a time; batch 8 / 16 prepare that many, then one
`run`.

Inputs: COUNT JPEGs of 1280×800 (1.02 MP, Pillow quality 90, 4:2:0) cut from the full-frame wallpapers of
`mate-backgrounds`, `ukui-wallpapers` and `lomiri-wallpapers-*` (cover-resized, three crops each: left,
centre, right), under bench/work/peer-1mp/ (made once).

Every measured process runs pinned to core 1 (`taskset -c 1`, OMP/OPENBLAS threads 1); CPU = time.process_time
of the loop (user + sys of the process: onnxruntime's threads included) / images, after one untimed warm-up
pass over the same files (page cache and onnxruntime's first-run allocations out of the figure); the median
of `--runs` processes. Python start-up, imports and the session's creation are outside the figure, as a
long-running indexer would have them. A breakdown (decode, resize, normalise, inference) comes from one
extra instrumented pass. Two Pillows: PyPI's wheel (bench/.venv) and Pillow-SIMD (PyPI's source built with
CC="cc -mavx2", bench/work/pillow-simd-venv, as bench/imageops.py builds it; made here when missing).
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from benchlib import sh  # noqa: E402

WORK = os.path.join(HERE, "work")
INPUTS = os.path.join(WORK, "peer-1mp")
VENV_PY = os.path.join(HERE, ".venv", "bin", "python")
SIMD_VENV = os.path.join(WORK, "pillow-simd-venv")
SIMD_PY = os.path.join(SIMD_VENV, "bin", "python")
ORT_VERSION = "1.23.2"
W, H = 1280, 800


def ensure_envs():
    if not os.path.exists(VENV_PY):
        sh([sys.executable, "-m", "venv", os.path.join(HERE, ".venv")])
        sh([VENV_PY, "-m", "pip", "install", "-q", f"onnxruntime=={ORT_VERSION}", "pillow", "numpy"])
    ok = os.path.exists(SIMD_PY) and subprocess.run(
        [SIMD_PY, "-c", "import PIL.Image, onnxruntime, numpy"], capture_output=True).returncode == 0
    if not ok:
        missing = [p for p in ("python3-venv", "python3-dev", "libjpeg62-turbo-dev", "zlib1g-dev", "gcc")
                   if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
        if missing:
            sh(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing)
        shutil.rmtree(SIMD_VENV, ignore_errors=True)
        sh(["/usr/bin/python3", "-m", "venv", SIMD_VENV])
        sh([SIMD_PY, "-m", "pip", "install", "-q", "--no-binary", "pillow-simd", "pillow-simd"],
           env=dict(os.environ, CC="cc -mavx2", MAX_CONCURRENCY="1"))
        sh([SIMD_PY, "-m", "pip", "install", "-q", f"onnxruntime=={ORT_VERSION}", "numpy"])


def make_inputs(count):
    files = sorted(glob.glob(os.path.join(INPUTS, "*.jpg")))
    if len(files) >= count:
        return files[:count]
    sys.path.insert(0, os.path.join(HERE, "datasets"))
    import build_copies
    from PIL import Image
    os.makedirs(INPUTS, exist_ok=True)
    Image.MAX_IMAGE_PIXELS = 60_000_000
    n = 0
    for pkg, p in build_copies.wallpapers():
        im = Image.open(p).convert("RGB")
        s = max(W / im.width, H / im.height)
        im = im.resize((max(W, round(im.width * s)), max(H, round(im.height * s))), Image.LANCZOS)
        for j, x in enumerate((0, (im.width - W) // 2, im.width - W)):
            y = (im.height - H) // 2 if j != 1 else 0 if im.height > H else 0
            im.crop((x, y, x + W, y + H)).save(os.path.join(INPUTS, f"w{n:03d}-{j}.jpg"), quality=90)
        n += 1
    files = sorted(glob.glob(os.path.join(INPUTS, "*.jpg")))
    if len(files) < count:
        raise SystemExit(f"only {len(files)} inputs")
    return files[:count]


# ---------------------------------------------------------------- the measured child
def child(args):
    import numpy as np
    import PIL
    from PIL import Image
    import similarity_lib as sl
    model = sl.Model(args.model_dir)
    files = json.load(open(args.files))
    size = model.size
    need_short = {"squash": None, "crop224": size[0], "crop256": round(size[0] * 256 / 224), "pad": None}[args.mode]

    def load(path):
        im = Image.open(path)
        if im.format == "JPEG":
            w, h = im.size
            if need_short:  # the shorter side must stay >= need_short
                s = need_short / min(w, h)
                im.draft("RGB", (int(w * s + 0.999), int(h * s + 0.999)))
            elif args.mode == "pad":  # the longer side >= 224
                s = size[0] / max(w, h)
                im.draft("RGB", (int(w * s + 0.999), int(h * s + 0.999)))
            else:
                im.draft("RGB", size)
        return im.convert("RGB")

    def one_pass(batch, timing=None):
        out = []
        pending = []
        for p in files:
            t0 = time.process_time()
            im = load(p)
            t1 = time.process_time()
            r = sl.prepare(im, size, args.mode)
            t2 = time.process_time()
            pending.append(model.tensor(r))
            t3 = time.process_time()
            if timing is not None:
                timing["decode"] += t1 - t0
                timing["resize"] += t2 - t1
                timing["normalise"] += t3 - t2
            if len(pending) == batch:
                t4 = time.process_time()
                out.append(sl.l2n(model.run(np.stack(pending))))
                if timing is not None:
                    timing["inference"] += time.process_time() - t4
                pending = []
        if pending:
            out.append(sl.l2n(model.run(np.stack(pending))))
        return np.concatenate(out)

    one_pass(args.batch)  # warm-up
    t0, w0 = time.process_time(), time.perf_counter()
    vecs = one_pass(args.batch)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    res = {"cpu_ms": 1000 * cpu / len(files), "wall_ms": 1000 * wall / len(files), "pillow": PIL.__version__,
           "simd": "post" in PIL.__version__, "ort": model.ort_version, "n": len(files)}
    if args.breakdown:
        timing = {"decode": 0.0, "resize": 0.0, "normalise": 0.0, "inference": 0.0}
        one_pass(args.batch, timing)
        res["breakdown_ms"] = {k: 1000 * v / len(files) for k, v in timing.items()}
        # the vectors against full decode (no draft): what shrink-on-load costs in similarity
        ref = model.embed([sl.load_rgb(p) for p in files[:20]], args.mode)
        res["cos_draft_vs_full"] = float(np.min(np.sum(ref * vecs[:20], axis=1)))
    print(json.dumps(res))


def measure(python, files_json, batch, mode, model_dir, breakdown=False):
    cmd = ["taskset", "-c", "1", python, os.path.abspath(__file__), "--_child", "--files", files_json,
           "--batch", str(batch), "--mode", mode]
    if model_dir:
        cmd += ["--model-dir", model_dir]
    if breakdown:
        cmd.append("--breakdown")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--files", help=argparse.SUPPRESS)
    ap.add_argument("--breakdown", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="pad", help="preprocessing (similarity_lib.RESIZE_MODES; pad is the recommended one)")
    ap.add_argument("--model-dir")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batches", default="1,8,16")
    ap.add_argument("--pythons", default="pillow,pillow-simd")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    if a._child:
        return child(a)
    ensure_envs()
    if os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(HERE, ".venv")):
        os.execv(VENV_PY, [VENV_PY, os.path.abspath(__file__)] + sys.argv[1:])  # the driver needs Pillow too
    load = open("/proc/loadavg").read().split()[:3]
    files = make_inputs(a.count)
    fj = os.path.join(WORK, "peer-1mp-files.json")
    json.dump(files, open(fj, "w"))
    pythons = {"pillow": VENV_PY, "pillow-simd": SIMD_PY}
    chosen = [(n, pythons[n]) for n in a.pythons.split(",")]
    batches = [int(b) for b in a.batches.split(",")]
    runs = {(n, b): [] for n, _ in chosen for b in batches}
    info = {}
    for rep in range(a.runs):  # interleaved, so machine noise spreads over every variant
        for n, py in chosen:
            for b in batches:
                r = measure(py, fj, b, a.mode, a.model_dir)
                runs[(n, b)].append(r)
                info[n] = (r["pillow"], r["ort"])
        print(f"run {rep + 1}/{a.runs} done", file=sys.stderr, flush=True)
    bd = {n: measure(py, fj, 1, a.mode, a.model_dir, breakdown=True) for n, py in chosen}
    lines = [f"Run {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `python3 bench/embed_peer.py --mode {a.mode} "
             f"--count {a.count} --runs {a.runs}`; load average at start {' '.join(load)}; "
             f"{len(files)} JPEGs 1280×800 (bench/work/peer-1mp/), every process `taskset -c 1`, onnxruntime "
             f"intra/inter-op threads 1, sequential.", "",
             "| Python peer | Pillow | batch | CPU ms / image (median of runs) | runs | wall ms / image |",
             "|---|---|---|---|---|---|"]
    for (n, b), rs in runs.items():
        cpu = [r["cpu_ms"] for r in rs]
        lines.append(f"| {n} | {info[n][0]} | {b} | **{statistics.median(cpu):.2f}** | "
                     f"{', '.join(f'{c:.2f}' for c in cpu)} | {statistics.median(r['wall_ms'] for r in rs):.2f} |")
    lines += ["", "Breakdown (batch 1, one instrumented pass, CPU ms / image):", "",
              "| peer | decode (draft) | resize | normalise | inference | cosine, draft vs full decode (min of 20) |",
              "|---|---|---|---|---|---|"]
    for n, r in bd.items():
        b = r["breakdown_ms"]
        lines.append(f"| {n} | {b['decode']:.2f} | {b['resize']:.2f} | {b['normalise']:.2f} | {b['inference']:.2f} | "
                     f"{r['cos_draft_vs_full']:.4f} |")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(WORK, "embed-peer.json"), "w") as f:
        json.dump({f"{n}/{b}": rs for (n, b), rs in runs.items()} | {"breakdown": bd}, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
