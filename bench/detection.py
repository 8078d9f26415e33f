"""Issue 38: Multiple Products Search measured through a vsearch binary on bench/detection_set.py's set.

    /usr/bin/python3 bench/detection.py --split tune                  # choose thresholds on this split only
    /usr/bin/python3 bench/detection.py --split held-out --markdown   # the figures reported, once
    /usr/bin/python3 bench/detection.py --quick                       # the small set (made when missing)
    /usr/bin/python3 bench/detection.py --binary PATH --json out.json
    /usr/bin/python3 bench/detection.py --model-dir /tmp/fp32-models   # another installation of the model

The set is made when missing (`bench/detection_set.py`, or `--quick`). Its catalog is indexed with the learned
model (`vsearch index catalog --metadata catalog.csv --catalog <set>/catalog.sqlite --jobs 1`; unchanged images
are not recomputed, so this is a no-op after the first run of a binary; with `--model-dir DIR` the catalog is
`<set>/catalog-<model.onnx sha256, 12 digits>.sqlite`, one per model, and DIR is passed to index and serve), then
one `vsearch serve --no-web-page` runs on loopback pinned to core 1 (`benchlib.start_server`, per-client limits off)
and this process sends, one at a time:
- each scene and each single-object picture to `POST /discoversearch` (multipart `image`, `result_limit=10`,
  `detection_limit` left to its default; `--detection-limit N` sends one);
- each ground-truth object's crop of its scene (the tight box, cut from the scene's JPEG and saved as PNG in
  `<set>/crops/`) to `POST /uploadsearch` (`limit=10`): the single-object baseline;
- each single-object picture whole to `POST /uploadsearch` (`limit=10`): today's whole-image search.

Metrics per split, per background (plain, photo, and the single-object pictures), and over all scenes:
- **found**: share of ground-truth objects matched by a detected object with IoU ≥ 0.5 (greedy one-to-one
  matching, highest IoU first);
- **type ok**: share of found objects whose `type` is one of its kind's accepted types (set.json);
- **own first**: share of found objects whose first result is the object's own catalog image;
- **kind p@10**: mean share of the found object's top 10 results of its kind (a kind with fewer than 10
  members caps this; the ceiling is printed), beside the same figure for the ground-truth crop's upload search
  (over the found objects, and over all objects), and that baseline's own first;
- **extra/scene**: detections matched to no ground-truth object, per scene;
- single-object pictures: share answered with **exactly one** object, and share whose first object's first
  result equals whole-image `/uploadsearch`'s first result (**same first**);
- per kind (in the JSON): objects, found, and the types answered for them (what the detector confuses);
- **time per scene**: the client's wall time (median, p90) of `/discoversearch`, and the server's CPU time
  per scene (`/proc/PID/stat` user + system, over the discover requests only).

Raw answers and figures go to `<set>/results-<split>.json` (and `--json OUT`); `--markdown` prints a table
ready for bench/RESULTS.md. It never writes RESULTS.md. Today's binary answers one object of type `image` (the
whole picture) per scene: its found figure is near 0 (only a scene that one object nearly fills matches).
"""
import argparse
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
import detection_set  # noqa: E402
from similarity_eval import get_json, multipart  # noqa: E402

DEFAULT_BINARY = os.path.join(ROOT, ".build", "release", "vsearch")
MODEL_DIR = os.path.join(ROOT, ".build-tools", "models", "efficientnet-lite0")
IOU_MATCH = 0.5
K = 10
GROUPS = ("plain", "photo", "single")


# ---------------------------------------------------------------- matching and metrics
def iou(a, b):
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def match(truth_boxes, detected_boxes, threshold=IOU_MATCH):
    """Greedy one-to-one matching by IoU (highest first): {truth index: detected index}."""
    pairs = sorted(((iou(t, d), i, j) for i, t in enumerate(truth_boxes) for j, d in enumerate(detected_boxes)),
                   key=lambda p: (-p[0], p[1], p[2]))
    used_t, used_d, out = set(), set(), {}
    for v, i, j in pairs:
        if v < threshold:
            break
        if i not in used_t and j not in used_d:
            out[i] = j
            used_t.add(i)
            used_d.add(j)
    return out


def kind_of(im_name):
    return im_name.split("__", 1)[0]


def kind_share(names, kind):
    return sum(kind_of(n) == kind for n in names[:K]) / K


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def evaluate(pictures, answers, crops, wholes, accepted, kind_sizes):
    """Figures of one group of pictures. answers[file] = discover JSON; crops[(file, i)] = upload JSON of the
    i-th truth crop; wholes[file] = the whole-picture upload JSON (single-object pictures)."""
    n_truth = found = type_ok = own_first = extra = 0
    p_det, p_crop_found, p_crop_all, crop_own, ceiling = [], [], [], [], []
    exactly_one = same_first = 0
    types_seen, per_kind = {}, {}
    for pic in pictures:
        ans = answers[pic["file"]]
        objs = ans.get("objects", [])
        m = match([o["box"] for o in pic["objects"]], [o.get("box", [0, 0, 0, 0]) for o in objs])
        extra += len(objs) - len(m)
        for i, truth in enumerate(pic["objects"]):
            n_truth += 1
            pk = per_kind.setdefault(truth["kind"], {"objects": 0, "found": 0, "types": {}})
            pk["objects"] += 1
            crop_names = [r["im_name"] for r in crops[(pic["file"], i)].get("result", [])]
            p_crop_all.append(kind_share(crop_names, truth["kind"]))
            crop_own.append(bool(crop_names) and crop_names[0] == truth["catalog_name"])
            ceiling.append(min(K, kind_sizes[truth["kind"]]) / K)
            if i not in m:
                continue
            det = objs[m[i]]
            found += 1
            t = det.get("type", "")
            types_seen[t] = types_seen.get(t, 0) + 1
            pk["found"] += 1
            pk["types"][t] = pk["types"].get(t, 0) + 1
            type_ok += t in accepted[truth["kind"]]
            names = [r["im_name"] for r in det.get("result", [])]
            own_first += bool(names) and names[0] == truth["catalog_name"]
            p_det.append(kind_share(names, truth["kind"]))
            p_crop_found.append(kind_share(crop_names, truth["kind"]))
        if pic["background"] == "single":
            exactly_one += len(objs) == 1
            whole = [r["im_name"] for r in wholes[pic["file"]].get("result", [])]
            first = [r["im_name"] for r in objs[0].get("result", [])] if objs else []
            same_first += bool(whole) and bool(first) and whole[0] == first[0]
    n = len(pictures)
    out = {"pictures": n, "objects": n_truth, "found": found / n_truth if n_truth else float("nan"),
           "type_ok": type_ok / found if found else float("nan"),
           "own_first": own_first / found if found else float("nan"),
           "kind_p10": mean(p_det), "crop_kind_p10_found": mean(p_crop_found), "crop_kind_p10_all": mean(p_crop_all),
           "crop_own_first": mean(crop_own), "kind_p10_ceiling": mean(ceiling),
           "extra_per_scene": extra / n if n else float("nan"), "types": dict(sorted(types_seen.items())),
           "per_kind": {k: per_kind[k] for k in sorted(per_kind)}}
    if pictures and pictures[0]["background"] == "single":
        out["exactly_one"] = exactly_one / n
        out["same_first_as_whole"] = same_first / n
    return out


# ---------------------------------------------------------------- the run
def ensure_set(quick):
    path = os.path.join(detection_set.OUT_QUICK if quick else detection_set.OUT, "set.json")
    if not os.path.exists(path):
        detection_set.build(quick)
    return detection_set.load(quick), os.path.dirname(path)


def model_dir():
    """The model's folder: --model-dir (an installation folder like .build-tools, or its models/efficientnet-lite0)
    or .build-tools/models/efficientnet-lite0."""
    d = ARGS_MODEL_DIR or MODEL_DIR
    nested = os.path.join(d, "models", "efficientnet-lite0")
    return nested if os.path.exists(os.path.join(nested, "model.json")) else d


def model_flags():
    return ["--model-dir", model_dir()] if os.path.exists(os.path.join(model_dir(), "model.json")) else []


def model_sha256():
    path = os.path.join(model_dir(), "model.onnx")
    return hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.exists(path) else None


ARGS_MODEL_DIR = None


def index(binary, folder, log):
    sha = model_sha256()
    catalog = os.path.join(folder, f"catalog-{sha[:12]}.sqlite" if ARGS_MODEL_DIR and sha else "catalog.sqlite")
    with open(log, "a") as f:
        subprocess.run(["nice", "-n", "10", binary, "index", os.path.join(folder, "catalog"), "--metadata",
                        os.path.join(folder, "catalog.csv"), "--catalog", catalog, "--jobs", "1", "--quiet",
                        *model_flags()], check=True, stderr=f, cwd=ROOT)
    return catalog


def crop_file(folder, pic, i, box):
    out = os.path.join(folder, "crops", os.path.splitext(pic["file"])[0] + f"_{i}.png")
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        Image.open(os.path.join(folder, pic["file"])).convert("RGB").crop(tuple(box)).save(out)
    return out


def post(url, endpoint, path, fields):
    body, headers = multipart(path, fields)
    t0 = time.perf_counter()
    js = get_json(url + endpoint, body, headers)
    return js, (time.perf_counter() - t0) * 1000


def slim(js):
    """An answer without the bulk: objects' type, score, box and result names."""
    keep = {k: js[k] for k in ("status", "error", "offline_note", "product_types", "total") if k in js}
    keep["objects"] = [{"type": o.get("type"), "score": o.get("score"), "box": o.get("box"), "total": o.get("total"),
                        "result": [{"im_name": r["im_name"]} for r in o.get("result", [])]}
                       for o in js.get("objects", [])]
    if "result" in js and "objects" not in js:
        keep["result"] = [{"im_name": r["im_name"]} for r in js["result"]]
    return keep


def no_nan(x):
    """JSON without NaN (a figure with nothing to measure is null)."""
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, list):
        return [no_nan(v) for v in x]
    return x


def run(args):
    doc, folder = ensure_set(args.quick)
    split = doc["splits"][args.split]
    accepted = {k: v["accepted_types"] for k, v in doc["kinds"].items()}
    kind_sizes = {k: len(v["objects"]) for k, v in doc["kinds"].items()}
    log = os.path.join(folder, f"serve-{args.split}.log")
    open(log, "w").close()
    catalog = index(args.binary, folder, log)
    proc, url = benchlib.start_server(args.binary, catalog, args.core, log, ["--no-web-page", *model_flags()])
    fields = {"result_limit": K}
    if args.detection_limit:
        fields["detection_limit"] = args.detection_limit
    pictures = split["scenes"] + split["singles"]
    answers, crops, wholes, ms, cpu = {}, {}, {}, {g: [] for g in GROUPS}, {g: 0.0 for g in GROUPS}
    try:
        for _ in range(3):    # warm-up: the model's session, the catalog's index (not counted)
            post(url, "/discoversearch", os.path.join(folder, pictures[0]["file"]), fields)
        for pic in pictures:
            path = os.path.join(folder, pic["file"])
            c0 = benchlib.proc_cpu_seconds(proc.pid)
            js, t = post(url, "/discoversearch", path, fields)
            cpu[pic["background"]] += benchlib.proc_cpu_seconds(proc.pid) - c0
            ms[pic["background"]].append(t)
            answers[pic["file"]] = slim(js)
        for pic in pictures:
            for i, truth in enumerate(pic["objects"]):
                js, _ = post(url, "/uploadsearch", crop_file(folder, pic, i, truth["box"]), {"limit": K})
                crops[(pic["file"], i)] = slim(js)
            if pic["background"] == "single":
                js, _ = post(url, "/uploadsearch", os.path.join(folder, pic["file"]), {"limit": K})
                wholes[pic["file"]] = slim(js)
    finally:
        proc.terminate()
        proc.wait()

    figures = {}
    for g in GROUPS:
        pics = [p for p in pictures if p["background"] == g]
        figures[g] = evaluate(pics, answers, crops, wholes, accepted, kind_sizes)
        figures[g].update(ms_median=statistics.median(ms[g]), ms_p90=benchlib.pct(ms[g], 90, "round", float("nan")),
                          server_cpu_ms=1000 * cpu[g] / len(pics))
    scenes = split["scenes"]
    figures["scenes"] = evaluate(scenes, answers, crops, wholes, accepted, kind_sizes)
    all_ms = ms["plain"] + ms["photo"]
    figures["scenes"].update(ms_median=statistics.median(all_ms), ms_p90=benchlib.pct(all_ms, 90, "round", float("nan")),
                             server_cpu_ms=1000 * (cpu["plain"] + cpu["photo"]) / len(scenes))
    version = subprocess.run([args.binary, "--version"], capture_output=True, text=True).stdout.strip()
    mtime = datetime.datetime.utcfromtimestamp(os.path.getmtime(args.binary))
    meta = {"split": args.split, "quick": args.quick, "binary": args.binary, "version": version,
            "binary_time": f"{mtime:%Y-%m-%d %H:%M} UTC", "work_tree": benchlib.git_rev(),
            "model": bool(model_flags()), "model_dir": model_dir(), "model_sha256": model_sha256(),
            "run": f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC",
            "machine": benchlib.machine(), "detection_limit": args.detection_limit,
            "set_sha256": hashlib.sha256(open(os.path.join(folder, "set.json"), "rb").read()).hexdigest()}
    result = {"meta": meta, "figures": figures,
              "answers": answers, "crops": {f"{f}#{i}": v for (f, i), v in crops.items()}, "wholes": wholes}
    for path in {os.path.join(folder, f"results-{args.split}.json"), args.json} - {None}:
        with open(path, "w") as f:
            json.dump(no_nan(result), f, indent=1)
    print(report(meta, figures, args))
    return result


def report(meta, figures, args):
    f3 = lambda v: "–" if v != v else f"{v:.3f}"  # noqa: E731  (nan → dash)
    cmd = "/usr/bin/python3 bench/detection.py --split " + meta["split"] + (" --quick" if meta["quick"] else "") + \
        (f" --model-dir {args.model_dir}" if args.model_dir else "")
    lines = [f"Run {meta['run']}, `{cmd}`, vsearch `{os.path.relpath(meta['binary'], ROOT)}` ({meta['version']}, "
             f"binary of {meta['binary_time']}; work tree at {meta['work_tree']}), learned model "
             f"{'installed' if meta['model'] else 'absent'}"
             f"{' (model.onnx ' + meta['model_sha256'][:12] + '…)' if meta['model_sha256'] else ''}, "
             f"server pinned to core {args.core}; {meta['machine']}. "
             f"Set: set.json sha256 {meta['set_sha256'][:12]}.", ""]
    hdr = ["group", "pictures", "objects", "found (IoU ≥ 0.5)", "type ok", "own first", "kind p@10",
           "crop upload kind p@10 (found / all)", "crop upload own first", "p@10 ceiling", "extra / scene",
           "exactly one", "same first as whole", "wall ms median (p90)", "server CPU ms / scene"]
    lines += ["| " + " | ".join(hdr) + " |", "|---" * len(hdr) + "|"]
    for g, label in (("plain", "plain backgrounds"), ("photo", "photographs"), ("scenes", "**all scenes**"),
                     ("single", "single-object pictures")):
        x = figures[g]
        lines.append("| " + " | ".join([
            label, str(x["pictures"]), str(x["objects"]), f3(x["found"]), f3(x["type_ok"]), f3(x["own_first"]),
            f3(x["kind_p10"]), f"{f3(x['crop_kind_p10_found'])} / {f3(x['crop_kind_p10_all'])}",
            f3(x["crop_own_first"]), f3(x["kind_p10_ceiling"]), f"{x['extra_per_scene']:.2f}",
            f3(x.get("exactly_one", float("nan"))), f3(x.get("same_first_as_whole", float("nan"))),
            f"{x['ms_median']:.0f} ({x['ms_p90']:.0f})", f"{x['server_cpu_ms']:.0f}"]) + " |")
    types = figures["scenes"]["types"]
    lines.append("")
    lines.append("Types answered for found objects (all scenes): " +
                 (", ".join(f"{t} {n}" for t, n in sorted(types.items(), key=lambda kv: -kv[1])) or "none"))
    if args.markdown:
        return "\n".join(lines)
    plain = lines[:2]
    for g in ("plain", "photo", "scenes", "single"):
        x = figures[g]
        plain.append(f"{g:7s} {x['pictures']:4d} pictures {x['objects']:4d} objects: found {f3(x['found'])}, type ok "
                     f"{f3(x['type_ok'])}, own first {f3(x['own_first'])}, kind p@10 {f3(x['kind_p10'])} (crop upload "
                     f"{f3(x['crop_kind_p10_found'])} on found, {f3(x['crop_kind_p10_all'])} on all; own first "
                     f"{f3(x['crop_own_first'])}; ceiling {f3(x['kind_p10_ceiling'])}), extra/scene "
                     f"{x['extra_per_scene']:.2f}" + (f", exactly one {f3(x['exactly_one'])}, same first as whole "
                     f"{f3(x['same_first_as_whole'])}" if "exactly_one" in x else "") +
                     f"; wall {x['ms_median']:.0f} ms median, {x['ms_p90']:.0f} p90; server CPU {x['server_cpu_ms']:.0f} ms")
    return "\n".join(plain + lines[-2:])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--split", choices=["tune", "held-out"], default="tune")
    ap.add_argument("--json", help="also write the raw answers and figures here")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown for bench/RESULTS.md")
    ap.add_argument("--quick", action="store_true", help="the small set (bench/work/detection-quick)")
    ap.add_argument("--detection-limit", type=int, help="send detection_limit (default: not sent)")
    ap.add_argument("--core", type=int, default=1, help="the core the server is pinned to (default 1)")
    ap.add_argument("--model-dir", help="the model's installation (default .build-tools/models/efficientnet-lite0); "
                    "its own catalog file")
    a = ap.parse_args()
    ARGS_MODEL_DIR = a.model_dir
    if not os.path.exists(a.binary):
        sys.exit(f"no vsearch binary at {a.binary} (build it, or --binary PATH)")
    run(a)
