#!/usr/bin/env python3
"""Issue 38's speed targets: `/discoversearch` and `/uploadsearch?detection=all` through `vsearch serve` on a 10k catalog.

    /usr/bin/python3 bench/discover_speed.py --markdown        # 1k and 10k catalogs, 40 scenes, 3 reps (~2 min)
    /usr/bin/python3 bench/discover_speed.py --quick           # smoke test: 10k only, 10 scenes, 1 rep

Targets (issue 38): discover on a 1 MP photo with up to 5 objects ≤ 150 ms end to end (decode, detection,
embeddings, searches) on a 10k-item catalog, one core; `detection=all` uploads ≤ 1.5× a plain upload search
(same pictures, same catalog).

**Catalogs** (SQLite, made once under bench/work/discover-speed/, kept while they hold the right number of rows):
rows 0..216 are the (colour, learned) vectors of bench/detection_set.py's catalog (bench/work/detection/
catalog.sqlite, indexed with the learned model; rows without a learned vector are skipped); the rest are
synthetic and deterministic (numpy, seeded per chunk of 1,000 rows, so the 1,000-row catalog is the 10,000-row
one's prefix): a random real row leaning towards another real row by t ~ U(0, 0.5), plus Gaussian noise of
0.45× the real vectors' per-dimension std, scaled to unit length (learned); its colour vector is the first
real row's plus noise of 0.3× the per-dimension std, the dimensions never negative in real rows (the histogram
and half of the layout) clipped at 0, each part scaled back to its length (histogram 0.937, layout 0.35, as
ColorFeatures makes them). **The synthetic rows only make the searches find and rank among 10k items: their
results are not judged** (quality is bench/detection.py's). `vsearch debug load-vectors --installed-model`
loads them (names v0000000…, the installed model's descriptor, so the server embeds uploads into the same
space) and `vsearch catalog hnsw --threads 1` builds the HNSW index ahead of the server. load-vectors' rows have
content hashes without the features and model tags, so serve's start-up lines say "learned vectors … for 0 of
10,000 images" and "10000 … indexed by an older vsearch": only those lines count by the tag; the searches use
the vectors (the learned HNSW index loads 10,000) and answer `similarity: visual`. `vsearch serve` runs with
its defaults (`--knn auto`: exact up to 1,000 items, the HNSW index above; `--knn exact` scans all 10k).

**Queries**: a fixed sample of the detection set's held-out scenes (random.Random(38), half on plain
backgrounds, half on photographs; JPEG quality 90, 0.8–1.1 MP, 1–5 pasted objects); warm-up requests use
tune-split scenes. Each catalog gets one `vsearch serve --no-web-page` (per-client limits off,
`benchlib.start_server`, the learned model installed as bench/detection.py passes it) pinned to core 0, so
everything it does runs on one core; this client runs on core 1 and sends one request at a time:
- `POST /discoversearch` (multipart `image`, `result_limit=10`, detection defaults);
- `POST /uploadsearch` (`limit=10`), plain (similarity default: visual on this catalog: decode, embed, k-NN);
- `POST /uploadsearch` with `detection=all` (`limit=10`): detect, then search the best object;
- `POST /uploadsearch` with `similarity=color` (`limit=10`): decode and the colour descriptor only, a floor.
Every answer must be OK with results (each discovered object too), else the run stops with the answer.
The held-out single-object pictures (one pasted object on a plain or photographic background: an upload of
one product, the common case) are sent too, half as many as the scenes, as plain and `detection=all` uploads
only: the ratio is reported for scenes and for single-object pictures separately.
Per rep, each (catalog, request, pictures) block sends 3 warm-up requests (not counted), then every scene once; the
blocks' order rotates from rep to rep. Wall = the client's time from sending the request to the parsed JSON;
server CPU per request = utime+stime of the server process (/proc/PID/stat) over the block's measured requests
/ requests. p50/p90 per block, the median over the reps. Objects = the mean number of objects answered per
scene (discover's `objects`, detection=all's `product_types`).

Raw figures go to bench/work/discover-speed/results.json and the section to bench/work/discover-speed/report.md;
`--markdown` prints it, ready for bench/RESULTS.md (this script never writes RESULTS.md).
"""
import argparse
import datetime
import functools
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
from benchlib import log, loadavg, proc_cpu_seconds, stop_server  # noqa: E402
import detection  # noqa: E402  (the set, the model's flags)
import engine  # noqa: E402  (remove_db)
from scale import now_utc, sqlite_count, wait_healthy  # noqa: E402
from similarity_eval import multipart  # noqa: E402

# detection.py's percentile: the element at rank round(q/100 * (n - 1)), nan when empty
pct = functools.partial(benchlib.pct, method="round", empty=float("nan"))

SECTION = "## Issue 38 — discover and detection=all speed on a 10k catalog (bench/discover_speed.py)"
WORK = os.path.join(HERE, "work", "discover-speed")
SOURCE_CATALOG = os.path.join(HERE, "work", "detection", "catalog.sqlite")   # the detection set's, indexed by bench/detection.py
TARGET_N = 10_000
DISCOVER_TARGET_MS = 150.0
RATIO_TARGET = 1.5
K = 10
WARMUP = 3
SERVER_CORE, CLIENT_CORE = 0, 1
COLOUR_DIMS, LEARNED_DIMS = 112, 512
HISTOGRAM_BINS, HISTOGRAM_WEIGHT, LAYOUT_WEIGHT = 64, (1 - 0.35 ** 2) ** 0.5, 0.35   # ColorFeatures' layout
SEED, CHUNK = 38, 1_000
LEAN_MAX = 0.5          # t ~ U(0, LEAN_MAX): how far a synthetic row leans towards a second real row
LEARNED_NOISE = 0.45    # × the real learned vectors' per-dimension std
COLOUR_NOISE = 0.3      # × the real colour vectors' per-dimension std
SAMPLE_SEED = 38
# (name, endpoint, fields): the requests measured, in their order in the first rep.
MODES = [("discover", "/discoversearch", {"result_limit": K}),
         ("upload", "/uploadsearch", {"limit": K}),
         ("upload detection=all", "/uploadsearch", {"limit": K, "detection": "all"}),
         ("upload similarity=color", "/uploadsearch", {"limit": K, "similarity": "color"})]


# ---------------------------------------------------------------- catalogs
def real_vectors():
    """The detection catalog's (colour, learned) rows, by id, those with a learned vector."""
    conn = sqlite3.connect(f"file:{SOURCE_CATALOG}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT features, learned FROM images WHERE learned IS NOT NULL ORDER BY id").fetchall()
    finally:
        conn.close()
    colour = np.stack([np.frombuffer(c, "<f4") for c, _ in rows]).astype(np.float32)
    learned = np.stack([np.frombuffer(v, "<f4") for _, v in rows]).astype(np.float32)
    assert colour.shape[1] == COLOUR_DIMS and learned.shape[1] == LEARNED_DIMS, (colour.shape, learned.shape)
    return colour, learned


def synthetic_rows(colour, learned, start, count):
    """`count` synthetic rows, the chunk beginning at row `start` (its own seed: row i depends on SEED and i // CHUNK)."""
    rng = np.random.default_rng([SEED, start // CHUNK])
    n_real = len(learned)
    first = rng.integers(0, n_real, count)
    second = rng.integers(0, n_real, count)
    t = rng.uniform(0, LEAN_MAX, (count, 1)).astype(np.float32)
    lv = (1 - t) * learned[first] + t * learned[second]
    lv += rng.standard_normal((count, LEARNED_DIMS)).astype(np.float32) * (LEARNED_NOISE * learned.std(0))
    lv /= np.linalg.norm(lv, axis=1, keepdims=True)
    cv = colour[first] + rng.standard_normal((count, COLOUR_DIMS)).astype(np.float32) * (COLOUR_NOISE * colour.std(0))
    never_negative = colour.min(0) >= 0          # the histogram and part of the layout: clip those at 0
    cv[:, never_negative] = np.maximum(cv[:, never_negative], 0)
    for lo, hi, weight in ((0, HISTOGRAM_BINS, HISTOGRAM_WEIGHT), (HISTOGRAM_BINS, COLOUR_DIMS, LAYOUT_WEIGHT)):
        cv[:, lo:hi] *= weight / np.maximum(np.linalg.norm(cv[:, lo:hi], axis=1, keepdims=True), 1e-9)
    return cv.astype(np.float32), lv.astype(np.float32)


def catalog_vectors(n):
    """The first n rows: the real ones, then synthetic chunks of CHUNK rows (so a smaller catalog is a prefix)."""
    colour, learned = real_vectors()
    cs, ls = [colour[:n]], [learned[:n]]
    row = len(learned)
    while row < n:
        count = min(CHUNK - row % CHUNK, n - row)
        c, v = synthetic_rows(colour, learned, row, count)
        cs.append(c)
        ls.append(v)
        row += count
    return np.concatenate(cs)[:n], np.concatenate(ls)[:n], len(learned)


def catalog_path(n):
    return os.path.join(WORK, f"catalog-{n}.sqlite")


def ensure_catalog(binary, n):
    """catalog-N.sqlite with its HNSW index, made when it does not hold n rows (see the module's doc)."""
    path = catalog_path(n)
    if sqlite_count(path) == n:
        return path
    colour, learned, n_real = catalog_vectors(n)
    colour_file, learned_file = os.path.join(WORK, f"colour-{n}.f32"), os.path.join(WORK, f"learned-{n}.f32")
    colour.astype("<f4").tofile(colour_file)
    learned.astype("<f4").tofile(learned_file)
    engine.remove_db(path)
    shutil.rmtree(path + ".hnsw", ignore_errors=True)
    log(f"  loading {os.path.relpath(path, ROOT)} ({n_real} real rows, {n - n_real} synthetic)")
    model = detection.model_flags()
    subprocess.run(["nice", "-n", "10", binary, "debug", "load-vectors", "--catalog", path, "--vectors", colour_file,
                    "--dims", str(COLOUR_DIMS), "--learned", learned_file, "--learned-dims", str(LEARNED_DIMS),
                    "--installed-model", *model], check=True, capture_output=True)
    if sqlite_count(path) != n:
        raise RuntimeError(f"{path}: not {n} rows after load-vectors")
    subprocess.run(["nice", "-n", "10", binary, "catalog", "hnsw", "--catalog", path, "--threads", "1", *model],
                   check=True, capture_output=True)
    return path


# ---------------------------------------------------------------- queries
def scene_sample(doc, count):
    """`count` held-out scenes, half plain, half photographs (a fixed draw, in the set's order)."""
    rng = random.Random(SAMPLE_SEED)
    scenes = doc["splits"]["held-out"]["scenes"]
    out = []
    for background in ("plain", "photo"):
        group = [s for s in scenes if s["background"] == background]
        picked = set(rng.sample(range(len(group)), min(len(group), count // 2)))
        out += [s for i, s in enumerate(group) if i in picked]
    return out


def single_sample(doc, count):
    """`count` held-out single-object pictures (a fixed draw, in the set's order): uploads of one product, the
    common case of `detection=all`."""
    singles = doc["splits"]["held-out"]["singles"]
    picked = set(random.Random(SAMPLE_SEED).sample(range(len(singles)), min(len(singles), count)))
    return [s for i, s in enumerate(singles) if i in picked]


def warmup_scenes(doc):
    """Tune-split scenes (never measured): the first photo ones."""
    return [s for s in doc["splits"]["tune"]["scenes"] if s["background"] == "photo"][:WARMUP]


# ---------------------------------------------------------------- the server
def post(url, body, headers):
    """The parsed JSON answer; an HTTP error raises with the answer's text."""
    req = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{url}: HTTP {e.code}: {e.read()[:1000]!r}") from None


def check(mode, scene, js):
    """Raises unless the answer is OK with results (every discovered object too); the objects answered."""
    problem = None
    if js.get("status") != "OK":
        problem = "status not OK"
    elif mode == "discover":
        objects = js.get("objects") or []
        if not objects:
            problem = "no objects"
        elif any(len(o.get("result") or []) == 0 for o in objects):
            problem = "an object without results"
    elif not js.get("result"):
        problem = "no results"
    if problem:
        raise RuntimeError(f"{mode} of {scene['file']}: {problem}: {json.dumps(js)[:1500]}")
    if mode == "discover":
        return len(js["objects"])
    return len(js.get("product_types") or [])


def serve(binary, n, knn):
    process, base = benchlib.start_server(binary, catalog_path(n), SERVER_CORE, os.path.join(WORK, f"serve-{n}.log"),
                                          ["--no-web-page", "--knn", knn, *detection.model_flags()])
    wait_healthy(base, process)
    return process, base


def run_block(base, pid, mode, warm, scenes, folder):
    """Warm-up, then every scene once: per-scene wall ms and objects, server CPU ms per request."""
    name, endpoint, fields = next(m for m in MODES if m[0] == mode)
    for scene in warm:
        check(mode, scene, post(base + endpoint, *multipart(os.path.join(folder, scene["file"]), fields)))
    bodies = [multipart(os.path.join(folder, s["file"]), fields) for s in scenes]
    ms, objects, answered = [], [], set()
    cpu0 = proc_cpu_seconds(pid)
    for scene, (body, headers) in zip(scenes, bodies):
        t0 = time.perf_counter()
        js = post(base + endpoint, body, headers)
        ms.append((time.perf_counter() - t0) * 1000)
        objects.append(check(mode, scene, js))
        answered.add(str(js.get("similarity")))
    cpu_ms = (proc_cpu_seconds(pid) - cpu0) / len(scenes) * 1000
    return {"ms": ms, "objects": objects, "cpu_ms": cpu_ms, "similarity": sorted(answered)}


def detects(mode):
    """Whether the request detects objects (its answer lists them)."""
    return mode in ("discover", "upload detection=all")


def summarise(runs, scenes):
    """Median over the reps of each rep's figures; the subgroups' p50 for the discover table."""
    def med(f):
        return statistics.median(f(r) for r in runs)

    def sub(keep):
        idx = [i for i, s in enumerate(scenes) if keep(s)]
        return med(lambda r: pct([r["ms"][i] for i in idx], 50)) if idx else float("nan")
    return {"p50": med(lambda r: pct(r["ms"], 50)), "p90": med(lambda r: pct(r["ms"], 90)),
            "max": med(lambda r: max(r["ms"])), "cpu_ms": med(lambda r: r["cpu_ms"]),
            "objects": statistics.mean(runs[0]["objects"]), "similarity": sorted({a for r in runs for a in r["similarity"]}),
            "over_target": med(lambda r: sum(x > DISCOVER_TARGET_MS for x in r["ms"]) / len(r["ms"])),
            "p50_plain": sub(lambda s: s["background"] == "plain"), "p50_photo": sub(lambda s: s["background"] == "photo"),
            "p50_4to5": sub(lambda s: len(s["objects"]) >= 4),
            "p50_runs": [pct(r["ms"], 50) for r in runs], "cpu_runs": [r["cpu_ms"] for r in runs]}


def bench(binary, sizes, groups, warm, folder, reps, knn):
    """Every (size, mode, group) block once a rep, the order rotated each rep; one server per catalog for the whole
    run. The single-object pictures are sent as uploads only (plain and detection=all)."""
    blocks = [(n, m[0], g) for n in sizes for g in groups for m in MODES
              if g == "scenes" or m[0] in ("upload", "upload detection=all")]
    runs = {b: [] for b in blocks}
    servers = {}
    try:
        for n in sizes:
            servers[n] = serve(binary, n, knn)
        for rep in range(reps):
            shift = rep % len(blocks)
            for n, mode, group in blocks[shift:] + blocks[:shift]:
                process, base = servers[n]
                run = run_block(base, process.pid, mode, warm, groups[group], folder)
                runs[(n, mode, group)].append(run)
                objects = f"objects {statistics.mean(run['objects']):.2f}, " if detects(mode) else ""
                log(f"  rep {rep + 1} {n:>6,} {group:7s} {mode:24s} p50 {pct(run['ms'], 50):7.1f} ms  p90 {pct(run['ms'], 90):7.1f}  "
                    f"server CPU {run['cpu_ms']:6.1f} ms/request  ({objects}{', '.join(run['similarity'])}); "
                    f"load {loadavg()}")
    finally:
        for process, _ in servers.values():
            stop_server(process, timeout=30)
    for n in sizes:   # what the server logged beyond the expected (errors, warnings, answers other than 200)
        with open(os.path.join(WORK, f"serve-{n}.log")) as f:
            noisy = [line for line in f if "indexed by an older vsearch" not in line   # load-vectors' rows: see the doc
                     and (any(w in line.lower() for w in ("error", "warn", "fail")) or
                          ("status=" in line and "status=200" not in line))]
        if noisy:
            log(f"  serve-{n}.log has {len(noisy)} unexpected lines, e.g. {noisy[0].strip()[:300]}")
    return {f"{n}|{mode}|{group}": {"n": n, "mode": mode, "group": group, **summarise(runs[(n, mode, group)], groups[group]),
                                    "raw": runs[(n, mode, group)]}
            for n, mode, group in blocks}


# ---------------------------------------------------------------- the report
def report(results, args):
    r = results["requests"]
    sizes = results["sizes"]
    sc = results["scenes"]
    mp = [s["width"] * s["height"] / 1e6 for s in sc]
    lines = [SECTION, "",
             f"Run {results['started']} UTC by `/usr/bin/python3 bench/discover_speed.py {' '.join(sys.argv[1:])}`; "
             f"{args.reps} rep{'s' if args.reps != 1 else ''}, {len(sc)} scenes per request kind and rep.", "",
             f"- Machine: {results['machine']}; load average at start {results['load_start']}, at the end "
             f"{results['load_end']}",
             f"- vsearch: {results['vsearch']}",
             f"- Scenes: {len(sc)} held-out scenes of bench/detection_set.py's set ({sum(s['background'] == 'plain' for s in sc)} "
             f"plain backgrounds, {sum(s['background'] == 'photo' for s in sc)} photographs), JPEG q90, "
             f"{min(mp):.2f}–{max(mp):.2f} MP (mean {statistics.mean(mp):.2f}), "
             f"{statistics.mean(len(s['objects']) for s in sc):.2f} pasted objects per scene (1–5); and "
             f"{len(results['singles'])} held-out single-object pictures (one pasted object, uploads only)",
             f"- Catalogs: {', '.join(f'{n:,}' for n in sizes)} items: the detection catalog's {results['real_rows']} "
             "(colour, learned) vectors and synthetic rows near them (the module's doc; they only make the "
             f"searches rank among that many items, results not judged); `vsearch serve --knn {args.knn}` "
             f"(auto: exact up to 1,000 items, HNSW above)", "",
             "`vsearch serve --no-web-page` pinned to core 0, one request at a time from a client on core 1; ms = wall "
             "per request at the client (p50/p90 over the scenes of a rep, median over the reps); server CPU = the "
             "server process's user+sys per request; objects = mean objects answered per scene.", "",
             "| catalog | pictures | request (similarity answered) | p50 ms | p90 ms | max ms | server CPU ms/request | objects | p50 of the reps |",
             "|---:|---|---|---:|---:|---:|---:|---:|---|"]
    for x in r.values():
        objs = f"{x['objects']:.2f}" if detects(x["mode"]) else "–"
        lines.append(f"| {x['n']:,} | {x['group']} | {x['mode']} ({', '.join(x['similarity'])}) | {x['p50']:.1f} | {x['p90']:.1f} | {x['max']:.1f} | {x['cpu_ms']:.1f} | "
                     f"{objs} | {', '.join(f'{v:.1f}' for v in x['p50_runs'])} |")
    lines.append("")
    for n in sizes:
        d, up, al, co = (r[f"{n}|{m[0]}|scenes"] for m in MODES)
        su, sa = r[f"{n}|upload|singles"], r[f"{n}|upload detection=all|singles"]
        lines.append(f"- {n:,} items: discover p50 {d['p50_plain']:.1f} ms on plain backgrounds, {d['p50_photo']:.1f} on "
                     f"photographs, {d['p50_4to5']:.1f} on scenes of 4–5 objects; {100 * d['over_target']:.0f} % of "
                     f"scenes over {DISCOVER_TARGET_MS:g} ms. detection=all / plain upload: wall p50 "
                     f"{al['p50'] / up['p50']:.2f}×, server CPU {al['cpu_ms'] / up['cpu_ms']:.2f}×; discover / plain "
                     f"upload: wall {d['p50'] / up['p50']:.2f}×, CPU {d['cpu_ms'] / up['cpu_ms']:.2f}×; the colour "
                     f"upload (decode and the colour descriptor, no model) {co['p50']:.1f} ms, {co['cpu_ms']:.1f} CPU-ms; "
                     f"single-object pictures: detection=all / plain upload wall p50 {sa['p50'] / su['p50']:.2f}×, "
                     f"server CPU {sa['cpu_ms'] / su['cpu_ms']:.2f}× ({sa['objects']:.2f} objects listed)")
    d, up, al = (r[f"{TARGET_N}|{m}|scenes"] for m in ("discover", "upload", "upload detection=all"))
    su, sa = r[f"{TARGET_N}|upload|singles"], r[f"{TARGET_N}|upload detection=all|singles"]
    ratio_wall, ratio_cpu = al["p50"] / up["p50"], al["cpu_ms"] / up["cpu_ms"]
    single_wall, single_cpu = sa["p50"] / su["p50"], sa["cpu_ms"] / su["cpu_ms"]
    verdicts = [
        (d["p50"] <= DISCOVER_TARGET_MS,
         f"discover on ~1 MP scenes of 1–5 objects, {TARGET_N:,}-item catalog, server on one core: p50 {d['p50']:.1f} ms "
         f"end to end (p90 {d['p90']:.1f}, max {d['max']:.1f}; server CPU {d['cpu_ms']:.1f} ms per request; "
         f"{d['objects']:.2f} objects answered per scene) (target ≤ {DISCOVER_TARGET_MS:g} ms)"),
        (ratio_wall <= RATIO_TARGET and ratio_cpu <= RATIO_TARGET,
         f"`detection=all` upload / plain upload on the same scenes, {TARGET_N:,} items: wall p50 {ratio_wall:.2f}× "
         f"({al['p50']:.1f} / {up['p50']:.1f} ms), server CPU {ratio_cpu:.2f}× ({al['cpu_ms']:.1f} / {up['cpu_ms']:.1f} ms) "
         f"(target ≤ {RATIO_TARGET:g}×, both)"),
        (single_wall <= RATIO_TARGET and single_cpu <= RATIO_TARGET,
         f"`detection=all` upload / plain upload of single-object pictures, {TARGET_N:,} items: wall p50 {single_wall:.2f}× "
         f"({sa['p50']:.1f} / {su['p50']:.1f} ms), server CPU {single_cpu:.2f}× ({sa['cpu_ms']:.1f} / {su['cpu_ms']:.1f} ms) "
         f"(target ≤ {RATIO_TARGET:g}×, both)")]
    lines += ["", "Targets:", ""] + [f"- {'met' if ok else 'NOT met'}: {t}" for ok, t in verdicts]
    return "\n".join(lines) + "\n", verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=detection.DEFAULT_BINARY)
    ap.add_argument("--sizes", default=f"1000,{TARGET_N}", help="catalog sizes (default 1000,10000; 10000 is judged)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scenes", type=int, default=40, help="held-out scenes measured, half plain, half photo (40)")
    ap.add_argument("--knn", choices=["auto", "exact", "approximate"], default="auto", help="serve's --knn (auto)")
    ap.add_argument("--quick", action="store_true", help="smoke test: 1 rep, 10 scenes, the 10k catalog only")
    ap.add_argument("--markdown", action="store_true", help="print the section for bench/RESULTS.md")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.scenes, args.sizes = 1, 10, str(TARGET_N)
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    if TARGET_N not in sizes:
        sys.exit(f"--sizes must include {TARGET_N} (the targets are judged there)")
    binary = os.path.abspath(args.binary)
    if not os.path.exists(binary):
        sys.exit(f"no vsearch binary at {binary} (build it, or --binary PATH)")
    if not detection.model_flags():
        sys.exit(f"no learned model at {detection.MODEL_DIR}: discover needs its detector")
    os.makedirs(WORK, exist_ok=True)

    doc, folder = detection.ensure_set(False)
    if not os.path.exists(SOURCE_CATALOG):
        sys.exit(f"no {SOURCE_CATALOG}: run bench/detection.py once (it indexes the set's catalog)")
    for n in sizes:
        ensure_catalog(binary, n)
    scenes, warm = scene_sample(doc, args.scenes), warmup_scenes(doc)
    singles = single_sample(doc, args.scenes // 2)

    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    mtime = datetime.datetime.fromtimestamp(os.path.getmtime(binary), datetime.timezone.utc)
    results = {"started": now_utc().strftime("%Y-%m-%d %H:%M"), "machine": benchlib.machine(),
               "load_start": loadavg(), "sizes": sizes, "real_rows": len(real_vectors()[1]),
               "vsearch": f"{version}, {os.path.relpath(binary, ROOT)} (binary of {mtime:%Y-%m-%d %H:%M} UTC; "
                          f"tree at {benchlib.git_rev()})",
               "scenes": [{k: s[k] for k in ("file", "width", "height", "background", "objects")} for s in scenes],
               "singles": [{k: s[k] for k in ("file", "width", "height", "background", "objects")} for s in singles],
               "args": vars(args)}
    os.sched_setaffinity(0, {CLIENT_CORE})    # the client on core 1 (the server is on core 0)
    t0 = time.time()
    results["requests"] = bench(binary, sizes, {"scenes": scenes, "singles": singles}, warm, folder, args.reps, args.knn)
    results["seconds"] = time.time() - t0
    results["load_end"] = loadavg()
    text, verdicts = report(results, args)
    results["verdicts"] = [{"met": ok, "text": t} for ok, t in verdicts]
    with open(os.path.join(WORK, "results.json"), "w") as f:
        json.dump(detection.no_nan(results), f, indent=1)
    with open(os.path.join(WORK, "report.md"), "w") as f:
        f.write(text)
    log(f"  measured in {results['seconds']:.0f} s; results in {os.path.relpath(WORK, ROOT)}/results.json, report.md")
    if args.markdown:
        print(text)
    else:
        print("\n".join(f"{'met' if ok else 'NOT met'}: {t}" for ok, t in verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
