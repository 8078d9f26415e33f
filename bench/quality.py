#!/usr/bin/env python3
"""VisualSearch copy-detection quality: vsearch against plain peers on the same
queries, in the same run, on two parts that share no image and no transform
parameter (bench/quality_set.py):

- tune: corpus/images with the tune parameters; every constant of vsearch's
  descriptor is chosen here;
- held-out: images from Debian packages corpus/ did not use, with other
  parameters of every transform; its figures are held against the targets.

    python3 bench/quality.py                 # build vsearch, make the sets if missing, evaluate both parts
    python3 bench/quality.py --record        # ... and put the report in bench/RESULTS.md
    python3 bench/quality.py --vsearch PATH  # use this binary (no build)
    python3 bench/quality.py --part tune     # one part only
    python3 bench/quality.py --peers-only    # only the Python peers (no vsearch)
    python3 bench/quality.py --no-peers --part held-out --vsearch BIN --compare OLD  # a descriptor change, quickly

Every catalog image is turned into one query per transform by ImageMagick (an
independent tool, fixed parameters and seeds); each method indexes the part's
catalog images and ranks them for every query. The right answer for a query is
the image it was made from.

Metrics per transform: recall@1, recall@10 and MRR@10 (reciprocal rank, 0 when
the source is not in the top 10; the same cut for every method, since vsearch
is asked for --limit 10). Ties count against the method: the rank of the
source is 1 + the number of other catalog images whose score is at least as
good as the source's (this matters for pHash, whose Hamming distances tie a lot).

See bench/README.md.
"""
import argparse
import concurrent.futures as cf
import datetime
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import build_vsearch, git_rev, replace_section  # noqa: E402  (bench/benchlib.py)
import quality_set as qs  # noqa: E402  (bench/quality_set.py: the two parts)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "corpus", "images")
CATALOG_CSV = os.path.join(ROOT, "corpus", "catalog.csv")
WORK = os.path.join(HERE, "work", "quality")
QUERIES = os.path.join(WORK, "queries")
MANIFEST = os.path.join(WORK, "queries.json")
SCRATCH = ".build-quality"
VSEARCH = os.path.join(ROOT, SCRATCH, "release", "vsearch")
NCPU = os.cpu_count() or 1
SECTION = "## VisualSearch: copy-detection quality"

SEED = 20261122
TOPK = 10
TARGET_OVERALL = 0.97
TARGET_EACH = 0.90
HELD_OUT_IMAGES = os.path.join(WORK, "held-out-images")
SANITY = ("identity", "the catalog file itself (sanity check, not in the overall row)")


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} -> exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def image_size(path):
    out = sh(["identify", "-format", "%w %h", path + "[0]"])
    w, h = out.split()
    return int(w), int(h)


def ensure_tools():
    missing = [p for p in qs.APT_PACKAGES
               if subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
               .stdout.find("install ok installed") < 0]
    if missing:
        print(f"apt-get install {' '.join(missing)}", flush=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, stdout=subprocess.DEVNULL)


def held_out_images():
    """The held-out catalog images under bench/work/quality/held-out-images (made once)."""
    candidates = qs.held_out_candidates()
    os.makedirs(HELD_OUT_IMAGES, exist_ok=True)
    wanted = {n + ".jpg" for n, _ in candidates}
    for f in os.listdir(HELD_OUT_IMAGES):   # the folder is the catalog: nothing else may be in it
        if f not in wanted:
            os.remove(os.path.join(HELD_OUT_IMAGES, f))
    todo = [(n, p) for n, p in candidates if not os.path.exists(os.path.join(HELD_OUT_IMAGES, n + ".jpg"))]

    def one(item):
        name, src = item
        out = os.path.join(HELD_OUT_IMAGES, name + ".jpg")
        sh(["convert", *qs.reduce_args(src, out + ".tmp.jpg")])
        os.replace(out + ".tmp.jpg", out)

    if todo:
        with cf.ThreadPoolExecutor(NCPU) as ex:
            list(ex.map(one, todo))
        print(f"held-out images: made {len(todo)}", flush=True)
    return [(n, os.path.join(HELD_OUT_IMAGES, n + ".jpg")) for n, _ in candidates]


def part_images(part):
    return qs.tune_sources() if part == "tune" else held_out_images()


def spec_hash(images):
    with open(qs.__file__) as f:
        source = f.read()
    text = json.dumps([source, SEED, [n for n, _ in images], sh(["convert", "-version"]).splitlines()[0]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def make_queries(part, images):
    """Make a part's queries under bench/work/quality/queries/PART if missing or made by another spec."""
    spec = spec_hash(images)
    manifest = os.path.join(WORK, f"queries-{part}.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            m = json.load(f)
        if m.get("spec") == spec and all(os.path.exists(q["path"]) for q in m["queries"]):
            print(f"queries ({part}): {len(m['queries'])} present (spec {spec})", flush=True)
            return m["queries"]
        print(f"queries ({part}): spec changed or files missing; remaking", flush=True)
    folder = os.path.join(QUERIES, part)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    for t in qs.TNAMES:
        os.makedirs(os.path.join(folder, t))
    plan = qs.plan(part, images, image_size, SEED, QUERIES)
    t0 = time.time()

    def one(q):
        root, ext = os.path.splitext(q["path"])
        tmp = root + ".tmp" + ext
        sh(["convert", *q["args"], "-strip", tmp])
        os.replace(tmp, q["path"])

    with cf.ThreadPoolExecutor(NCPU) as ex:
        list(ex.map(one, plan))
    with open(manifest, "w") as f:
        json.dump({"spec": spec, "seed": SEED, "queries": plan}, f, indent=1)
    print(f"queries ({part}): made {len(plan)} in {time.time() - t0:.0f} s", flush=True)
    return plan


# ------------------------------------------------------------------ peers
def load_bgr(path, box=None):
    import cv2
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    if img is None:
        raise RuntimeError(f"cv2 cannot read {path}")
    if box:
        x1, y1, x2, y2 = box
        img = img[y1:y2, x1:x2]
    return img


def feat_rgb(img):
    import numpy as np
    q = (img >> 5).astype(np.int32)  # 8 levels per channel
    idx = (q[..., 2] * 64 + q[..., 1] * 8 + q[..., 0]).ravel()
    h = np.bincount(idx, minlength=512).astype(np.float64)
    return h / h.sum()


def feat_hsv(img):
    import cv2
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    h = cv2.calcHist([hsv], [0, 1], None, [50, 60], [0, 180, 0, 256])
    cv2.normalize(h, h, alpha=0, beta=1, norm_type=cv2.NORM_MINMAX)
    return h


def feat_phash(img):
    import cv2
    import imagehash
    from PIL import Image
    return imagehash.phash(Image.fromarray(cv2.cvtColor(img, cv2.COLOR_BGR2RGB)))


def dist_rgb(a, b):
    import numpy as np
    return float(np.abs(a - b).sum())


def dist_hsv(a, b):
    import cv2
    return float(cv2.compareHist(a, b, cv2.HISTCMP_BHATTACHARYYA))


def dist_phash(a, b):
    return float(a - b)


PEERS = {
    "rgb-hist-L1": (feat_rgb, dist_rgb, "RGB 8×8×8 histogram (512 bins, sum 1), L1 distance (numpy)"),
    "hsv-hist-bhatt": (feat_hsv, dist_hsv, "OpenCV HSV histogram H 50 × S 60 bins (`cv2.calcHist`, "
                                           "min-max normalised), `cv2.compareHist(HISTCMP_BHATTACHARYYA)`"),
    "phash": (feat_phash, dist_phash, "imagehash `phash` (64 bits), Hamming distance"),
}


# catalog image -> the set of catalog images with the same decoded pixels (itself included);
# any of them is a right answer (the corpus ships one clip-art twice under two names)
SAME = {}


def find_duplicates(images):
    import cv2
    by = {}
    for name, path in images:
        img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        key = hashlib.sha256(img.tobytes() + str(img.shape).encode()).hexdigest()
        by.setdefault(key, []).append(name)
    for group in by.values():
        for n in group:
            SAME[n] = frozenset(group)
    return [sorted(g) for g in by.values() if len(g) > 1]


def rank_of(target, scored, higher_better):
    """scored: dict name -> score. Rank of the best-scored right answer (target or a pixel-identical
    copy), ties counted against it; None if no right answer was returned."""
    right = SAME.get(target, frozenset([target]))
    mine = [v for n, v in scored.items() if n in right]
    if not mine:
        return None
    s = max(mine) if higher_better else min(mine)
    if higher_better:
        ahead = sum(1 for n, v in scored.items() if n not in right and v >= s)
    else:
        ahead = sum(1 for n, v in scored.items() if n not in right and v <= s)
    return 1 + ahead


def run_peers(images, queries):
    out = {}
    for pname, (feat, dist, _) in PEERS.items():
        t0 = time.time()
        index = {name: feat(load_bgr(path)) for name, path in images}
        rows = []
        for q in queries:
            f = feat(load_bgr(q["path"], q.get("box")))
            d = {name: dist(f, g) for name, g in index.items()}
            r = rank_of(q["source"], d, higher_better=False)
            top = sorted(d.items(), key=lambda kv: (kv[1], kv[0]))[:TOPK]
            rows.append({"transform": q["transform"], "source": q["source"], "rank": r,
                         "top": [[n, round(v, 4)] for n, v in top]})
        out[pname] = rows
        print(f"peer {pname}: {len(queries)} queries in {time.time() - t0:.1f} s", flush=True)
    return out


# ------------------------------------------------------------------ vsearch
def run_vsearch(binary, part, folder, queries, jobs=1):
    db = os.path.join(WORK, f"vsearch-catalog-{part}.db")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    t0 = time.time()
    r = subprocess.run([binary, "index", folder, "--catalog", db], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"vsearch index failed (exit {r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    index_s = time.time() - t0
    print(f"vsearch index: {index_s:.1f} s; {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ''}", flush=True)

    def one(q):
        cmd = [binary, "search", "--image", q["path"], "--catalog", db, "--limit", str(TOPK), "--json"]
        if q.get("box"):
            cmd += ["--box", ",".join(str(v) for v in q["box"])]
        t = time.time()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.time() - t
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} -> exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        try:
            resp = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            raise RuntimeError(f"{' '.join(cmd)}: output is not JSON ({e}):\n{p.stdout[:2000]}")
        if resp.get("status") != "OK":
            raise RuntimeError(f"{' '.join(cmd)}: status {resp.get('status')}:\n{p.stdout[:2000]}")
        res = resp.get("result") or []
        scored = {}
        for it in res:
            scored.setdefault(it["im_name"], float(it.get("score", 0.0)))
        return {"transform": q["transform"], "source": q["source"],
                "rank": rank_of(q["source"], scored, higher_better=True),
                "top": [[it["im_name"], it.get("score")] for it in res[:TOPK]], "wall": wall}

    t0 = time.time()
    with cf.ThreadPoolExecutor(jobs) as ex:
        rows = list(ex.map(one, queries))
    walls = sorted(r["wall"] for r in rows)
    print(f"vsearch search ({part}): {len(rows)} queries in {time.time() - t0:.1f} s", flush=True)
    return rows, {"index_s": index_s, "median_query_wall_ms": 1000 * walls[len(walls) // 2]}


# ------------------------------------------------------------------ metrics and report
def metrics(rows):
    n = len(rows)
    r1 = sum(1 for r in rows if r["rank"] == 1) / n
    r10 = sum(1 for r in rows if r["rank"] is not None and r["rank"] <= TOPK) / n
    mrr = sum(1.0 / r["rank"] for r in rows if r["rank"] is not None and r["rank"] <= TOPK) / n
    return {"n": n, "r1": r1, "r10": r10, "mrr": mrr}


def table(method, rows):
    by = {t: [r for r in rows if r["transform"] == t] for t in qs.TNAMES + [SANITY[0]]}
    lines = [f"| {method} | transform | n | recall@1 | recall@10 | MRR@10 |", "|---|---|---|---|---|---|"]
    stats = {}
    for t in qs.TNAMES + [SANITY[0]]:
        if not by[t]:
            continue
        m = metrics(by[t])
        stats[t] = m
        label = t if t != SANITY[0] else f"{t} (sanity)"
        lines.append(f"| | {label} | {m['n']} | {m['r1']:.3f} | {m['r10']:.3f} | {m['mrr']:.3f} |")
    m = metrics([r for r in rows if r["transform"] in qs.TNAMES])
    stats["overall"] = m
    lines.append(f"| | **overall** | {m['n']} | **{m['r1']:.3f}** | **{m['r10']:.3f}** | **{m['mrr']:.3f}** |")
    return lines, stats


def combined_table(all_stats):
    methods = list(all_stats)
    head = "| transform | " + " | ".join(methods) + " |"
    lines = ["recall@1 (recall@10, MRR@10) per method:", "", head, "|---|" + "---|" * len(methods)]
    for t in qs.TNAMES + ["overall", SANITY[0]]:
        cells = []
        for mth in methods:
            m = all_stats[mth].get(t)
            cells.append("—" if m is None else f"{m['r1']:.3f} ({m['r10']:.3f}, {m['mrr']:.3f})")
        label = f"**{t}**" if t == "overall" else (f"{t} (sanity)" if t == SANITY[0] else t)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def verdicts(all_stats):
    if "vsearch" not in all_stats:
        return ["vsearch not run: no verdict."], None
    v = all_stats["vsearch"]
    out, ok_all = [], True
    ok = v["overall"]["r1"] >= TARGET_OVERALL
    ok_all &= ok
    out.append(f"- {'PASS' if ok else 'FAIL'}: overall recall@1 {v['overall']['r1']:.3f} ≥ {TARGET_OVERALL}")
    worst = min(qs.TNAMES, key=lambda t: v[t]["r1"])
    ok = all(v[t]["r1"] >= TARGET_EACH for t in qs.TNAMES)
    ok_all &= ok
    below = [f"{t} {v[t]['r1']:.3f}" for t in qs.TNAMES if v[t]["r1"] < TARGET_EACH]
    out.append(f"- {'PASS' if ok else 'FAIL'}: recall@1 ≥ {TARGET_EACH} for every transform "
               f"(lowest: {worst} {v[worst]['r1']:.3f}" + (f"; below: {', '.join(below)})" if below else ")"))
    if not any(p in all_stats for p in PEERS):
        out.append("- peers not run (--no-peers): no verdict against them")
    for p in PEERS:
        if p not in all_stats:
            continue
        ok = v["overall"]["r1"] > all_stats[p]["overall"]["r1"]
        ok_all &= ok
        out.append(f"- {'PASS' if ok else 'FAIL'}: ahead of {p} overall (recall@1 {v['overall']['r1']:.3f} vs "
                   f"{all_stats[p]['overall']['r1']:.3f}; MRR {v['overall']['mrr']:.3f} vs {all_stats[p]['overall']['mrr']:.3f})")
    out.append(f"- **{'PASS' if ok_all else 'FAIL'}** overall verdict")
    return out, ok_all


def misses(rows, limit=40):
    lines = []
    for r in rows:
        if r["transform"] in qs.TNAMES + [SANITY[0]] and r["rank"] != 1:
            top = ", ".join(f"{n} {s:.3f}" if isinstance(s, (int, float)) else f"{n} {s}" for n, s in r["top"][:3])
            rank = r["rank"] if r["rank"] is not None else f">{TOPK}"
            lines.append(f"| {r['transform']} | {r['source']} | {rank} | {top} |")
    head = ["| transform | query (source) | rank of source | top 3 returned (score) |", "|---|---|---|---|"]
    more = [f"\n({len(lines) - limit} more in bench/work/quality/results.json)"] if len(lines) > limit else []
    return head + lines[:limit] + more if lines else ["none"]


def record(text):
    path = os.path.join(HERE, "RESULTS.md")
    replace_section(path, SECTION, text)
    print(f"recorded in {os.path.relpath(path, ROOT)}")


def part_report(part, images, queries, results, vinfo):
    """The report lines of one part: its set, the combined table, verdicts (held-out) and misses."""
    all_stats = {mth: table(mth, rows)[1] for mth, rows in results.items()}
    lines = [f"### Part: {part}", ""]
    n_photo = sum(1 for n, _ in images if not n.startswith(("oc_", "tp_", "hc_", "ht_")))
    if part == "tune":
        lines.append(f"Catalog: the {len(images)} images of `corpus/images` (clip-art on white from Open Clip Art and "
                     f"Tux Paint, {n_photo} photographs). Every constant of the descriptor was chosen on this part.")
    else:
        counts = {k: sum(1 for n, _ in images if n.startswith(k)) for k in ("hc_", "ht_", "hm_")}
        lines.append(f"Catalog: {len(images)} images none of which is in corpus/ — {counts['hc_']} Open Clip Art, "
                     f"{counts['ht_']} Tux Paint stamps (seed {qs.HELD_OUT_SEED}), {counts['hm_']} MATE desktop "
                     f"photographs and artwork — flattened on white, ≤ 800 px, JPEG 92. No constant was chosen on it.")
    if vinfo:
        lines.append(f"vsearch: index {vinfo['index_s']:.1f} s wall, median query {vinfo['median_query_wall_ms']:.0f} ms wall "
                     f"(one `vsearch search` process per query).")
    lines.append(f"Queries: {len(queries)} = {len(images)} × {len(qs.TNAMES)} transforms, plus {len(images)} identity.")
    lines.append("")
    lines += combined_table(all_stats)
    lines.append("")
    if part == "held-out":
        lines.append("Verdicts (targets on the held-out part):")
        lines.append("")
        vlines, ok = verdicts(all_stats)
        lines += vlines
        lines.append("")
    else:
        ok = None
    if "vsearch" in results:
        lines.append(f"vsearch misses ({part}, source not at rank 1):")
        lines.append("")
        lines += misses(results["vsearch"])
        lines.append("")
    return lines, all_stats, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record", action="store_true", help="write the report section into bench/RESULTS.md")
    ap.add_argument("--vsearch", help="vsearch binary to use (skips the build)")
    ap.add_argument("--no-build", action="store_true", help=f"use {SCRATCH}/release/vsearch as it is")
    ap.add_argument("--peers-only", action="store_true", help="skip vsearch")
    ap.add_argument("--no-peers", action="store_true",
                    help="skip the Python peers (vsearch, and --compare, only: no verdict against the peers)")
    ap.add_argument("--compare", metavar="PATH",
                    help="another vsearch binary (e.g. the previous release) evaluated as the column 'vsearch-before'")
    ap.add_argument("--part", choices=["tune", "held-out", "both"], default="both",
                    help="which part to evaluate (tune: where constants are chosen; held-out: what is reported)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="vsearch search processes at a time (1: searches write to the catalog, and "
                         "concurrent ones have failed with 'database is locked')")
    ap.add_argument("--remake", action="store_true", help="delete and remake the queries")
    a = ap.parse_args()
    started = time.time()
    try:
        import cv2, numpy, PIL, imagehash  # noqa: F401,E401
    except ImportError:
        print("installing peers: pip install ImageHash opencv-python-headless pillow numpy", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "ImageHash", "opencv-python-headless",
                        "pillow", "numpy"], check=True)
    import cv2
    import imagehash
    import numpy
    import PIL

    ensure_tools()
    os.makedirs(WORK, exist_ok=True)
    if a.remake:
        for part in qs.PARTS:
            m = os.path.join(WORK, f"queries-{part}.json")
            if os.path.exists(m):
                os.remove(m)
    binary = None
    if not a.peers_only:
        if a.vsearch:
            binary = os.path.abspath(a.vsearch)
        else:
            if not a.no_build:
                build_vsearch(SCRATCH, VSEARCH)
            binary = VSEARCH

    parts = list(qs.PARTS) if a.part == "both" else [a.part]
    report = [SECTION, ""]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    report.append(f"Run {when} by `python3 bench/quality.py{' --record' if a.record else ''}`.")
    report.append("")
    if binary:
        ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip() or "?"
        report.append(f"- vsearch: {ver}, built from {git_rev()}; each part's catalog made by `vsearch index FOLDER "
                      f"--catalog …`, queries by `vsearch search --image Q [--box x1,y1,x2,y2] --catalog … --limit {TOPK} --json`.")
    report.append(f"- Peers (Python {platform.python_version()}, OpenCV {cv2.__version__}, numpy {numpy.__version__}, "
                  f"Pillow {PIL.__version__}, ImageHash {getattr(imagehash, '__version__', '?')}); each indexes "
                  f"the same catalog images and ranks all of them for every query:")
    for p, (_, _, desc) in PEERS.items():
        report.append(f"  - `{p}`: {desc}")
    if a.compare:
        ver = subprocess.run([a.compare, "--version"], capture_output=True, text=True).stdout.strip() or "?"
        report.append(f"- `vsearch-before`: {a.compare} ({ver}), the same commands: the descriptor before this change, "
                      "for comparison (not a peer; no verdict).")
    report.append("- Two parts that share no image and no transform parameter (bench/quality_set.py): **tune** "
                  "(corpus/, where every constant of vsearch's descriptor was chosen) and **held-out** (images from "
                  "Debian packages corpus/ did not use, other parameters of every transform): the held-out figures "
                  "are the ones held against the targets.")
    report.append(f"- Transforms made by {sh(['convert', '-version']).splitlines()[0].replace('Version: ', '')} "
                  f"(seed {SEED}), PNG unless said otherwise; per transform, the tune and held-out parameters:")
    for t in qs.TNAMES:
        report.append(f"  - `{t}`: {qs.TRANSFORMS[t][0]}")
    report.append(f"  - `{SANITY[0]}`: {SANITY[1]}")
    report.append(f"- Metrics: recall@1, recall@{TOPK}, MRR@{TOPK} (reciprocal rank of the source image, 0 beyond "
                  f"rank {TOPK}). Ties count against the method (rank = 1 + number of other images scored at least "
                  f"as well). Pixel-identical catalog images count as one right answer. Overall = every transformed query of the part.")
    report.append(f"- Targets (held-out part): vsearch recall@1 ≥ {TARGET_OVERALL} overall and ≥ {TARGET_EACH} for "
                  f"every transform, and ahead of every peer overall.")
    report.append("")
    verdict_ok, raw = None, {}
    for part in parts:
        images = part_images(part)
        dups = find_duplicates(images)
        queries = make_queries(part, images)
        sanity = [{"part": part, "transform": SANITY[0], "source": n, "path": p, "box": None} for n, p in images]
        allq = queries + sanity
        results, vinfo = {}, None
        folder = qs.CORPUS if part == "tune" else HELD_OUT_IMAGES
        if binary:
            results["vsearch"], vinfo = run_vsearch(binary, part, folder, allq, a.jobs)
        if a.compare:
            results["vsearch-before"], _ = run_vsearch(os.path.abspath(a.compare), part + "-before", folder, allq, a.jobs)
        if not a.no_peers:
            results.update(run_peers(images, allq))
        lines, stats, ok = part_report(part, images, queries, results, vinfo)
        if dups:
            lines.insert(3, "Pixel-identical catalog images: " + "; ".join(" = ".join(f"`{n}`" for n in g) for g in dups))
        report += lines
        raw[part] = {"stats": stats, "rows": results}
        if ok is not None:
            verdict_ok = ok
    report.append(f"Evaluation wall time: {time.time() - started:.0f} s. Raw rankings: `bench/work/quality/results.json`.")
    text = "\n".join(report) + "\n"
    print(text)
    with open(os.path.join(WORK, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(WORK, "results.json"), "w") as f:
        json.dump(raw, f, indent=1)
    if a.record:
        record(text)
    if verdict_ok is False:
        sys.exit(1)


if __name__ == "__main__":
    main()
