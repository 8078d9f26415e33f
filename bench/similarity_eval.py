"""Issue 25: "same kind of thing" precision and copy-detection recall measured through vsearch itself.

    python3 bench/similarity_eval.py --split tune                      # every similarity mode the binary has
    python3 bench/similarity_eval.py --split held-out --modes color    # the figures held against the targets
    python3 bench/similarity_eval.py --vsearch PATH --sets kinds --markdown out.md

Sets (made when missing by bench/datasets/build_kinds.py and build_copies.py, under bench/work/):
- **kinds**: each image of the part is a query (`GET /search?im_name=X&limit=11`), itself dropped, against
  the rest of the part; precision@10 = share of the 10 nearest in the query's kind. Also the ceiling (a kind
  with fewer than 11 images in the part cannot fill 10) and chance.
- **copies**: each transformed query uploaded (`POST /uploadsearch`, limit 10) against the part's originals +
  distractors; recall@1 and recall@10 per transform and overall.

Each part is indexed into its own catalog (`vsearch index DIR --metadata CSV --catalog …/PART.sqlite --jobs 1`,
remade every run), one `vsearch serve --no-web-page` per catalog pinned to core 1 (`benchlib.start_server`),
queries sent one at a time from this process. The similarity mode goes as the `similarity` parameter (query
string for /search, a form field for /uploadsearch) when the binary's `vsearch similar --help` lists
`--similarity`; a binary without it is measured as `color` (what it does today) and says so.
Raw answers: bench/work/simeval/PART-results.json. Never tune anything on `--split held-out`.
"""
import argparse
import collections
import datetime
import json
import os
import random
import subprocess
import sys
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "datasets"))
import benchlib  # noqa: E402

WORK = os.path.join(HERE, "work", "simeval")
DEFAULT_VSEARCH = os.path.join(ROOT, ".build", "release", "vsearch")
ALL_MODES = ["visual", "color", "fused"]


def ensure_sets():
    import build_copies
    import build_kinds
    build_kinds.build()
    build_copies.build()
    return build_kinds, build_copies


def supported_modes(vsearch):
    h = subprocess.run([vsearch, "similar", "--help"], capture_output=True, text=True).stdout
    return ALL_MODES if "--similarity" in h else None


def index(vsearch, folder, metadata, catalog, log):
    if os.path.exists(catalog):
        os.remove(catalog)
    for ext in ("-wal", "-shm"):
        if os.path.exists(catalog + ext):
            os.remove(catalog + ext)
    with open(log, "a") as f:
        subprocess.run(["nice", "-n", "10", vsearch, "index", folder, "--metadata", metadata, "--catalog", catalog,
                        "--jobs", "1", "--quiet"], check=True, stderr=f)


def get_json(url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)


def multipart(path, fields):
    b = "visearch.boundary.%016x" % random.getrandbits(64)
    parts = []
    for k, v in fields.items():
        parts.append(f"--{b}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n".encode())
    parts.append(f"--{b}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"q.jpg\"\r\n"
                 f"Content-Type: image/jpeg\r\n\r\n".encode() + open(path, "rb").read() + b"\r\n")
    parts.append(f"--{b}--\r\n".encode())
    return b"".join(parts), {"Content-Type": f"multipart/form-data; boundary={b}"}


# ---------------------------------------------------------------- metrics (shared with similarity_experiments.py)
def kind_precision(rankings, kind_of, k=10):
    """rankings: {query: [names, nearest first, query excluded]} -> (mean p@k, {kind: p@k}, ceiling, chance)."""
    per_kind = collections.defaultdict(list)
    size = collections.Counter(kind_of.values())
    n = len(kind_of)
    ceil, chance = [], []
    for q, ranked in rankings.items():
        kq = kind_of[q]
        per_kind[kq].append(sum(kind_of[r] == kq for r in ranked[:k]) / k)
        ceil.append(min(k, size[kq] - 1) / k)
        chance.append((size[kq] - 1) / (n - 1))
    allp = [p for v in per_kind.values() for p in v]
    return (sum(allp) / len(allp), {kk: sum(v) / len(v) for kk, v in sorted(per_kind.items())},
            sum(ceil) / len(ceil), sum(chance) / len(chance))


def copy_recall(rankings, queries):
    """rankings: {query: [names]}; queries: rows with query, transform, target -> {transform|'overall': (r@1, r@10, n)}."""
    by = collections.defaultdict(list)
    for q in queries:
        ranked = rankings[q["query"]]
        hit1 = bool(ranked) and ranked[0] == q["target"]
        hit10 = q["target"] in ranked[:10]
        by[q["transform"]].append((hit1, hit10))
        by["overall"].append((hit1, hit10))
    return {t: (sum(a for a, _ in v) / len(v), sum(b for _, b in v) / len(v), len(v)) for t, v in by.items()}


def copy_table(results, transforms):
    """results: {method: copy_recall output} -> markdown rows of recall@1 (recall@10) per transform."""
    methods = list(results)
    lines = ["| transform | " + " | ".join(f"{m} R@1 (R@10)" for m in methods) + " |",
             "|---|" + "---|" * len(methods)]
    for t in list(transforms) + ["overall"]:
        cells = []
        for m in methods:
            r1, r10, n = results[m][t]
            cells.append(f"{r1:.3f} ({r10:.3f})")
        lines.append(f"| {'**overall**' if t == 'overall' else t} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- the run
def run(args):
    bk, bc = ensure_sets()
    os.makedirs(WORK, exist_ok=True)
    modes = supported_modes(args.vsearch)
    note = ""
    if modes is None:
        modes = ["color"]
        note = "(this binary has no `--similarity`: its one answer is today's colour descriptor, reported as `color`)"
        send_mode = False
    else:
        send_mode = True
        if args.modes:
            modes = [m for m in args.modes.split(",") if m in modes]
    log = os.path.join(WORK, f"{args.split}-serve.log")
    open(log, "w").close()
    out = {"split": args.split, "vsearch": args.vsearch, "modes": modes, "kinds": {}, "copies": {}}
    mtime = datetime.datetime.utcfromtimestamp(os.path.getmtime(args.vsearch))
    report = [f"Run {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, `python3 bench/similarity_eval.py --split {args.split}`, "
              f"vsearch `{os.path.relpath(args.vsearch, ROOT)}` (binary of {mtime:%Y-%m-%d %H:%M} UTC; work tree at "
              f"{benchlib.git_rev()}) {note}".rstrip()]
    version = subprocess.run([args.vsearch, "--version"], capture_output=True, text=True).stdout.strip()
    report.append(f"`vsearch --version`: {version}")

    if "kinds" in args.sets:
        labels = bk.load_labels(args.split)
        kind_of = {n: k for n, k, _ in labels}
        cat = os.path.join(WORK, f"kinds-{args.split}.sqlite")
        index(args.vsearch, os.path.join(bk.OUT, args.split), os.path.join(bk.OUT, args.split + ".csv"), cat, log)
        proc, url = benchlib.start_server(args.vsearch, cat, 1, log, ["--no-web-page"])
        try:
            rows = []
            for mode in modes:
                rankings = {}
                for q in kind_of:
                    qs = {"im_name": q, "limit": 11}
                    if send_mode:
                        qs["similarity"] = mode
                    r = get_json(url + "/search?" + urllib.parse.urlencode(qs))
                    rankings[q] = [x["im_name"] for x in r["result"] if x["im_name"] != q][:10]
                p, per_kind, ceil, chance = kind_precision(rankings, kind_of)
                out["kinds"][mode] = {"p10": p, "per_kind": per_kind, "ceiling": ceil, "chance": chance, "rankings": rankings}
                rows.append((mode, p, per_kind))
        finally:
            proc.terminate()
            proc.wait()
        kinds = sorted(set(kind_of.values()))
        report.append(f"\n**Kinds, {args.split}** ({len(kind_of)} images, {len(kinds)} kinds; ceiling "
                      f"{ceil:.3f}, chance {chance:.3f}): precision@10")
        report.append("\n| mode | p@10 | " + " | ".join(kinds) + " |\n|---|---|" + "---|" * len(kinds))
        for mode, p, pk in rows:
            report.append(f"| {mode} | **{p:.3f}** | " + " | ".join(f"{pk[k]:.2f}" for k in kinds) + " |")

    if "copies" in args.sets:
        catrows, queries = bc.load_part(args.split)
        cat = os.path.join(WORK, f"copies-{args.split}.sqlite")
        d = os.path.join(bc.OUT, args.split)
        # index only the catalog/ folder: queries live beside it
        index(args.vsearch, os.path.join(d, "catalog"), os.path.join(d, "catalog.csv"), cat, log)
        proc, url = benchlib.start_server(args.vsearch, cat, 1, log, ["--no-web-page"])
        results = {}
        try:
            for mode in modes:
                rankings = {}
                for q in queries:
                    fields = {"limit": 10}
                    if send_mode:
                        fields["similarity"] = mode
                    body, headers = multipart(os.path.join(d, q["file"]), fields)
                    r = get_json(url + "/uploadsearch", body, headers)
                    rankings[q["query"]] = [x["im_name"] for x in r["result"]]
                results[mode] = copy_recall(rankings, queries)
                out["copies"][mode] = {"recall": results[mode], "rankings": rankings}
        finally:
            proc.terminate()
            proc.wait()
        transforms = list(dict.fromkeys(q["transform"] for q in queries))
        n_orig = sum(r["role"] == "original" for r in catrows)
        report.append(f"\n**Copies, {args.split}** ({n_orig} originals + {len(catrows) - n_orig} distractors, "
                      f"{len(queries)} queries): recall@1 (recall@10)\n")
        report.append(copy_table(results, transforms))
    with open(os.path.join(WORK, f"{args.split}-results.json"), "w") as f:
        json.dump(out, f)
    text = "\n".join(report)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vsearch", default=DEFAULT_VSEARCH)
    ap.add_argument("--split", choices=["tune", "held-out"], default="tune")
    ap.add_argument("--modes", help="comma-separated subset of visual,color,fused (default: all the binary has)")
    ap.add_argument("--sets", default="kinds,copies")
    ap.add_argument("--markdown", help="also write the report here")
    a = ap.parse_args()
    if not os.path.exists(a.vsearch):
        sys.exit(f"no vsearch binary at {a.vsearch} (build it, or --vsearch PATH)")
    run(a)
