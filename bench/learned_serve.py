#!/usr/bin/env python3
"""Issue 25: `vsearch serve` with learned vectors at 100k items — upload queries end to end, and RSS.

    bench/.venv/bin/python bench/learned_serve.py --vsearch .build/release/vsearch            # ~15 min
    bench/.venv/bin/python bench/learned_serve.py --vsearch BIN --reps 3 --uploads 100 --record

Catalogs (SQLite, in-memory scan; made once under bench/work/scale-learned/ from bench/scale.py's learned data,
`python3 bench/scale.py --space learned` makes the pool when missing): `learned-N` = N rows with colour and learned
vectors (`vsearch debug load-vectors --learned … --installed-model`: the installed model's descriptor, so the server
embeds uploads into the same space), `colour-N` = the same rows' colour vectors only (a catalog as it was before
issue 25). N = 100,000 for the targets, 1,000 (uploads: "no scan") and 10,000 (RSS: the per-item slope).

**Uploads** (target: p50 ≤ 30 ms on a 100k catalog): `vsearch serve --no-web-page` pinned to core 0 (everything the
server does runs on that core: HTTP, decode, both descriptors, the scan), this client on core 1, sending real 1 MP
JPEGs (1280×800 wallpaper photos, bench/embed_peer.py's inputs) one at a time to `POST /uploadsearch` (multipart,
`limit=10`; `similarity` not sent = the default, visual on a learned catalog with the model installed; or
`similarity=color`). Wall = the client's time from sending the request to the parsed JSON answer; server CPU per
query = utime+stime of the server process (/proc/PID/stat) over the measured requests / requests. 5 warm-up
uploads first (model loaded, caches warm), not counted. Each configuration `--reps` times, interleaved; the medians.
Beside them, in the same run: the scan alone (`vsearch debug query-vectors` on the same 100k catalog, in process,
visual and color, the held-out learned queries of scale.py), and decode + embed alone (`vsearch model embed` of the
same JPEGs in one process: CPU per image after the first).

**RSS** (target: ≤ 150 MB per 100k items above today's): VmRSS of the server after start-up and one find-similar
(the catalog's index loaded), and again after 20 uploads (the model's session loaded on a learned catalog);
VmHWM beside. For colour and learned catalogs of 10k and 100k: the difference at 100k, and the per-100k slope
((100k − 10k) / 0.9) of each, which leaves out fixed costs (the runtime and model, ~tens of MB, paid once).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
from benchlib import log, loadavg, pct, stop_server  # noqa: E402
from benchlib import proc_cpu_seconds as cpu_seconds  # noqa: E402
import embed_peer  # noqa: E402  (the 1 MP JPEG inputs)
import engine  # noqa: E402
import scale  # noqa: E402  (the learned data)
from similarity_eval import multipart  # noqa: E402

SECTION = "## Issue 25 — learned vectors at scale: upload queries and serve's RSS (bench/learned_serve.py)"
TARGET_N = 100_000
SMALL_N = 1_000
SLOPE_N = 10_000
P50_TARGET_MS = 30.0
RSS_TARGET_MB = 150.0
WARMUP = 5
SERVER_CORE, CLIENT_CORE = 0, 1


def catalog_path(kind, n):
    return os.path.join(scale.WORK, f"serve-{kind}-{n}.sqlite")


def ensure_catalog(binary, kind, n):
    """serve-learned-N / serve-colour-N (see the module's doc), loaded once."""
    path = catalog_path(kind, n)
    if scale.sqlite_count(path) == n:
        return with_graphs(binary, path)
    engine.remove_db(path)
    cmd = [binary, "debug", "load-vectors", "--catalog", path, "--vectors", scale.colour_file(n), "--dims", str(scale.COLOUR_DIMS)]
    if kind == "learned":
        cmd += ["--learned", scale.base_file(n), "--learned-dims", str(scale.DIMS), "--installed-model"]
    log(f"  loading {os.path.relpath(path, ROOT)}")
    subprocess.run(["nice", "-n", "10"] + cmd, check=True, capture_output=True)
    if scale.sqlite_count(path) != n:
        raise RuntimeError(f"{path}: not {n} rows")
    return with_graphs(binary, path)


def with_graphs(binary, path):
    """The catalog with its HNSW graphs saved (`vsearch catalog hnsw`, a no-op when they are): since issue 29 a
    catalog past `exact_below` is searched through them, and a server without them would build them at start."""
    subprocess.run(["nice", "-n", "10", binary, "catalog", "hnsw", "--catalog", path], check=True, capture_output=True)
    return path


def post(url, body, headers):
    req = urllib.request.Request(url, data=body, headers=headers)
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)


def get(url):
    with urllib.request.urlopen(url, timeout=120) as r:
        return json.load(r)


def serve(binary, catalog, name):
    process, base = benchlib.start_server(binary, catalog, SERVER_CORE, os.path.join(scale.WORK, f"serve-{name}.log"),
                                          ["--no-web-page"])
    scale.wait_healthy(base, process)
    return process, base


def upload_run(base, pid, bodies, mode):
    """Warm-up, then every body once: per-request wall ms, server CPU ms per request, the similarity answered."""
    fields = {"limit": 10}
    if mode != "default":
        fields["similarity"] = mode
    posts = [multipart(path, fields) for path in bodies]
    for body, headers in posts[:WARMUP]:
        post(base + "/uploadsearch", body, headers)
    ms, answered = [], set()
    cpu0 = cpu_seconds(pid)
    for body, headers in posts[WARMUP:]:
        t0 = time.perf_counter()
        r = post(base + "/uploadsearch", body, headers)
        ms.append((time.perf_counter() - t0) * 1000)
        answered.add(r.get("similarity"))
        if len(r.get("result", [])) != 10:
            raise RuntimeError(f"an upload returned {len(r.get('result', []))} results: {str(r)[:300]}")
    cpu = (cpu_seconds(pid) - cpu0) / len(ms) * 1000
    return {"ms": ms, "cpu_ms": cpu, "similarity": sorted(str(a) for a in answered)}


def bench_uploads(binary, files, uploads, reps):
    """Upload configurations (catalog size, mode), reps interleaved, one server per catalog for the whole run."""
    rng = random.Random(25)
    configs = [(TARGET_N, "default"), (TARGET_N, "color"), (SMALL_N, "default"), (SMALL_N, "color")]
    servers = {}
    runs = {c: [] for c in configs}
    try:
        for n in (TARGET_N, SMALL_N):
            servers[n] = serve(binary, catalog_path("learned", n), f"learned-{n}")
        for rep in range(reps):
            for n, mode in configs:
                process, base = servers[n]
                bodies = [rng.choice(files) for _ in range(WARMUP + uploads)]
                run = upload_run(base, process.pid, bodies, mode)
                runs[(n, mode)].append(run)
                log(f"  rep {rep + 1} {n:>7,} {mode:7s} p50 {pct(run['ms'], 50):6.2f} ms  p90 {pct(run['ms'], 90):6.2f}  "
                    f"p99 {pct(run['ms'], 99):6.2f}  server CPU {run['cpu_ms']:.2f} ms/query  ({', '.join(run['similarity'])}); "
                    f"load {loadavg()}")
    finally:
        for process, _ in servers.values():
            stop_server(process, timeout=30)
    out = {}
    for (n, mode), rr in runs.items():
        out[f"{n}|{mode}"] = {
            "n": n, "mode": mode, "similarity": rr[0]["similarity"],
            "p50": statistics.median(pct(r["ms"], 50) for r in rr), "p90": statistics.median(pct(r["ms"], 90) for r in rr),
            "p99": statistics.median(pct(r["ms"], 99) for r in rr), "cpu_ms": statistics.median(r["cpu_ms"] for r in rr),
            "p50_runs": [pct(r["ms"], 50) for r in rr], "cpu_runs": [r["cpu_ms"] for r in rr]}
    return out


def bench_scan(binary, reps):
    """The in-memory scan alone on the 100k learned catalog: `debug query-vectors` pinned to core 0."""
    out = {}
    for mode, qfile, dims in (("visual", os.path.join(scale.WORK, "run-report.f32"), scale.DIMS),
                              ("color", os.path.join(scale.WORK, "colour-queries.f32"), scale.COLOUR_DIMS)):
        p50s, cpus = [], []
        for _ in range(reps):
            cmd = [binary, "debug", "query-vectors", "--catalog", catalog_path("learned", TARGET_N), "--queries", qfile,
                   "--dims", str(dims), "--similarity", mode, "--k", "10", "--warmup", str(scale.WARMUP)]
            _, _, _, text = engine.run_wait4(cmd, pin=True)
            js = scale.parse_json(text)
            ms = js["ms"][-scale.N_REPORT:]
            p50s.append(pct(ms, 50))
            cpus.append(1000 * js["cpu_seconds"] / len(js["ms"]))
        out[mode] = {"p50": statistics.median(p50s), "cpu_ms": statistics.median(cpus), "p50_runs": p50s}
        log(f"  scan alone ({mode}): p50 {out[mode]['p50']:.2f} ms, CPU {out[mode]['cpu_ms']:.2f} ms/query")
    return out


def bench_embed(binary, files, reps):
    """Decode + colour-manage + embed a 1 MP JPEG alone: `vsearch model embed` of every file in one process (core 0),
    minus the same process over the first file only (start-up and the model's load), per extra file."""
    per = []
    for _ in range(reps):
        one, _, _, _ = engine.run_wait4([binary, "model", "embed", "--batch", "1", files[0]], pin=True)
        many, _, _, _ = engine.run_wait4([binary, "model", "embed", "--batch", "1", *files], pin=True)
        per.append((many - one) / (len(files) - 1) * 1000)
    log(f"  embed alone: {statistics.median(per):.2f} CPU-ms per 1 MP JPEG (runs {', '.join(f'{p:.2f}' for p in per)})")
    return {"cpu_ms": statistics.median(per), "runs": per, "files": len(files)}


def bench_rss(binary, files, reps):
    rows = {}
    for rep in range(reps):
        for kind in ("colour", "learned"):
            for n in (SLOPE_N, TARGET_N):
                process, base = serve(binary, catalog_path(kind, n), f"rss-{kind}-{n}")
                try:
                    get(base + "/search?im_name=v0000003&limit=10")
                    loaded = scale.proc_status_mib(process.pid, "VmRSS")
                    for path in files[:20]:
                        body, headers = multipart(path, {"limit": 10})
                        post(base + "/uploadsearch", body, headers)
                    after = scale.proc_status_mib(process.pid, "VmRSS")
                    hwm = scale.proc_status_mib(process.pid, "VmHWM")
                finally:
                    stop_server(process, timeout=30)
                rows.setdefault(f"{kind}|{n}", []).append({"loaded": loaded, "uploads": after, "hwm": hwm})
                log(f"  rss rep {rep + 1} {kind:7s} {n:>7,}: {loaded:.0f} MiB loaded, {after:.0f} after uploads, HWM {hwm:.0f}")
    return {k: {f: statistics.median(r[f] for r in v) for f in ("loaded", "uploads", "hwm")} | {"runs": v}
            for k, v in rows.items()}


def report(results, args):
    up, scan, emb, rss = results["uploads"], results["scan"], results["embed"], results["rss"]
    lines = [SECTION, "",
             f"Run {results['started']} UTC by `bench/.venv/bin/python bench/learned_serve.py {' '.join(sys.argv[1:])}`; "
             f"{args.reps} reps, {args.uploads} uploads per rep and configuration.", "",
             f"- Machine: {results['machine']}; load average at start {results['load_start']}, at the end "
             f"{results['load_end']} (shared machine: another session was building and timing on it)",
             f"- vsearch: {results['vsearch']}",
             f"- Inputs: {len(results['files'])} JPEGs 1280×800 (1.02 MP, quality 90) cut from Debian wallpaper photos "
             "(bench/embed_peer.py's, bench/work/peer-1mp/); catalogs as the module's doc says (bench/scale.py's "
             "learned rows and their colour vectors; brand metadata).", "",
             "### Upload query end to end", "",
             "`POST /uploadsearch` (multipart, limit 10) to `vsearch serve` pinned to core 0, one request at a time "
             "from a client on core 1; ms = wall per request at the client (p50/p90/p99 over the uploads of a rep, "
             "median over the reps); server CPU = the server process's user+sys per request.", "",
             "| catalog | similarity sent (answered) | p50 ms | p90 ms | p99 ms | server CPU ms/query | p50 of the reps |",
             "|---|---|---:|---:|---:|---:|---|"]
    for key, r in up.items():
        sent = "none (default)" if r["mode"] == "default" else r["mode"]
        lines.append(f"| {r['n']:,} learned + colour | {sent} ({', '.join(r['similarity'])}) | {r['p50']:.2f} | {r['p90']:.2f} | "
                     f"{r['p99']:.2f} | {r['cpu_ms']:.2f} | {', '.join(f'{x:.2f}' for x in r['p50_runs'])} |")
    big, small = up[f"{TARGET_N}|default"], up[f"{SMALL_N}|default"]
    big_c, small_c = up[f"{TARGET_N}|color"], up[f"{SMALL_N}|color"]
    lines += ["", "Where the time goes (same run, core 0):", "",
              f"- decode + colour management + embed alone (`vsearch model embed`, one process over the "
              f"{emb['files']} JPEGs, minus the same over one): {emb['cpu_ms']:.2f} CPU-ms per image",
              f"- the in-memory scan alone on the 100k catalog (`debug query-vectors`, in process, the held-out "
              f"queries): visual p50 {scan['visual']['p50']:.2f} ms ({scan['visual']['cpu_ms']:.2f} CPU-ms), "
              f"color p50 {scan['color']['p50']:.2f} ms ({scan['color']['cpu_ms']:.2f} CPU-ms)",
              f"- visual upload on 1,000 items (nothing to scan) p50 {small['p50']:.2f} ms, on 100,000 {big['p50']:.2f} ms: "
              f"the 100k scan and ranking add {big['p50'] - small['p50']:.2f} ms; server CPU "
              f"{small['cpu_ms']:.2f} → {big['cpu_ms']:.2f} ms",
              f"- colour upload on 1,000 items p50 {small_c['p50']:.2f} ms, on 100,000 {big_c['p50']:.2f} ms; visual costs "
              f"{big['p50'] - big_c['p50']:.2f} ms more than color at 100k (the embedding, and a 512-value scan "
              "instead of 112)"]
    lines += ["", "### RSS", "",
              "VmRSS of `vsearch serve` (MiB) after start-up and one find-similar (index loaded), and after 20 uploads "
              "(similarity default: visual on a learned catalog, loading the model; color on a colour one); VmHWM the peak; "
              f"median of {args.reps} server starts.", "",
              "| catalog | items | RSS loaded | RSS after uploads | peak (VmHWM) |", "|---|---:|---:|---:|---:|"]
    for kind in ("colour", "learned"):
        for n in (SLOPE_N, TARGET_N):
            r = rss[f"{kind}|{n}"]
            lines.append(f"| {kind}{' only (today)' if kind == 'colour' else ' + colour'} | {n:,} | {r['loaded']:.0f} | "
                         f"{r['uploads']:.0f} | {r['hwm']:.0f} |")
    c10, c100, l10, l100 = (rss[k] for k in (f"colour|{SLOPE_N}", f"colour|{TARGET_N}", f"learned|{SLOPE_N}", f"learned|{TARGET_N}"))
    scale_f = 100_000 / (TARGET_N - SLOPE_N)
    slope_c = (c100["loaded"] - c10["loaded"]) * scale_f
    slope_l = (l100["loaded"] - l10["loaded"]) * scale_f
    lines += ["", f"- per 100k items (slope from 10k to 100k, loaded): colour-only {slope_c:.0f} MiB, with learned vectors "
              f"{slope_l:.0f} MiB: learned vectors add {slope_l - slope_c:.0f} MiB per 100k (target ≤ {RSS_TARGET_MB:.0f} MB; "
              "the in-memory form is 516 bytes per item, 49 MiB per 100k)",
              f"- at 100k, learned catalog minus colour-only: {l100['loaded'] - c100['loaded']:.0f} MiB loaded, "
              f"{l100['uploads'] - c100['uploads']:.0f} MiB after uploads (this includes the model and ONNX Runtime, "
              f"a fixed cost), peak {l100['hwm'] - c100['hwm']:.0f} MiB"]
    verdicts = [
        (big["p50"] <= P50_TARGET_MS, f"upload query end to end on 100k items, similarity default (visual): p50 {big['p50']:.2f} ms "
                                      f"(target ≤ {P50_TARGET_MS:g} ms); server CPU {big['cpu_ms']:.2f} ms per query"),
        (slope_l - slope_c <= RSS_TARGET_MB, f"serve's RSS per 100k items with learned vectors: +{slope_l - slope_c:.0f} MiB above "
                                             f"colour-only (target ≤ {RSS_TARGET_MB:.0f} MB); at 100k with the model loaded "
                                             f"+{l100['uploads'] - c100['uploads']:.0f} MiB"),
    ]
    lines += ["", "### Targets", ""] + [f"- {'target met' if ok else 'target NOT met'}: {t}" for ok, t in verdicts]
    return "\n".join(lines) + "\n", verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vsearch", default=os.path.join(ROOT, ".build", "release", "vsearch"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--uploads", type=int, default=100, help="measured uploads per rep and configuration (100)")
    ap.add_argument("--only", default="uploads,scan,embed,rss")
    ap.add_argument("--record", action="store_true", help="write the section into bench/RESULTS.md")
    args = ap.parse_args()
    parts = set(args.only.split(","))
    binary = os.path.abspath(args.vsearch)
    scale.configure_space("learned")
    scale.ensure_pool(binary)
    sizes = sorted({SMALL_N, SLOPE_N, TARGET_N})
    scale.ensure_data(sizes)
    np = scale._np()
    colour_q = np.fromfile(scale.colour_file(SLOPE_N), np.float32).reshape(-1, scale.COLOUR_DIMS)[::97][:scale.WARMUP + scale.N_REPORT]
    colour_q.tofile(os.path.join(scale.WORK, "colour-queries.f32"))   # catalog rows as colour queries (the colour space has no held-out set here)
    for kind in ("learned", "colour"):
        for n in sizes:
            if kind == "colour" and n == SMALL_N:
                continue
            ensure_catalog(binary, kind, n)
    files = embed_peer.make_inputs(100)
    results = {"started": scale.now_utc().strftime("%Y-%m-%d %H:%M"), "machine": benchlib.machine(),
               "load_start": loadavg(), "files": files,
               "vsearch": subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
               + f", {os.path.relpath(binary, ROOT)} (tree at {benchlib.git_rev()})"}
    if "embed" in parts:
        log("embed alone")
        results["embed"] = bench_embed(binary, files, args.reps)
    if "scan" in parts:
        log("scan alone")
        results["scan"] = bench_scan(binary, args.reps)
    if "uploads" in parts:
        log("uploads")
        # The client on core 1 (the server is on core 0).
        os.sched_setaffinity(0, {CLIENT_CORE})
        results["uploads"] = bench_uploads(binary, files, args.uploads, args.reps)
    if "rss" in parts:
        log("rss")
        results["rss"] = bench_rss(binary, files, args.reps)
    results["load_end"] = loadavg()
    json.dump(results, open(os.path.join(HERE, "work", "learned-serve-results.json"), "w"), indent=1)
    if parts >= {"uploads", "scan", "embed", "rss"}:
        text, verdicts = report(results, args)
        with open(os.path.join(HERE, "work", "learned-serve-report.md"), "w") as f:
            f.write(text)
        benchlib.write_section(args.record, SECTION, text)
        return 0 if all(ok for ok, _ in verdicts) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
